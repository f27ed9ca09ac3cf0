//! A lane of the timeline named by the capture's own numbers ([`LaneName`]): the value the
//! critical path reports ([`crate::LaneTime`]), written in words by its `Display`
//! (`GPU 0 stream 7`, `rank 1 host thread 1234`) and serialised as those words, which
//! it also reads back ([`std::str::FromStr`]).

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use trace_model::Capture;

use crate::Lane;

/// Which row of the timeline, by the numbers the capture gives it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum LaneKind {
    /// A host thread, by its thread id.
    HostThread {
        /// The thread id the capture records.
        tid: i64,
    },
    /// A GPU stream, by its device's and its own ordinal.
    GpuStream {
        /// The device's ordinal.
        gpu: i64,
        /// The stream's ordinal on it.
        stream: i64,
    },
}

/// A lane named for people and for tests: which row ([`LaneKind`]) and, where several
/// ranks were replayed together, on which rank.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct LaneName {
    /// The rank's name (`0`, `1`, … or its file name) where ranks were replayed together.
    pub rank: Option<String>,
    /// The row.
    pub lane: LaneKind,
}

impl LaneName {
    /// `lane` of `capture`, on no named rank.
    pub fn of(lane: Lane, capture: &Capture) -> Self {
        let lane = match lane {
            Lane::Host(t) => LaneKind::HostThread {
                tid: capture.thread(t).tid,
            },
            Lane::Stream(s) => {
                let s = capture.stream(s);
                LaneKind::GpuStream {
                    gpu: capture.device(s.device).ordinal,
                    stream: s.ordinal,
                }
            }
        };
        LaneName { rank: None, lane }
    }

    /// The same lane on the rank named `rank`.
    pub fn on_rank(self, rank: impl Into<String>) -> Self {
        LaneName {
            rank: Some(rank.into()),
            ..self
        }
    }

    /// Whether the lane is a host thread.
    pub fn is_host(&self) -> bool {
        matches!(self.lane, LaneKind::HostThread { .. })
    }

    /// Whether the lane is a GPU stream.
    pub fn is_stream(&self) -> bool {
        matches!(self.lane, LaneKind::GpuStream { .. })
    }
}

impl fmt::Display for LaneKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LaneKind::HostThread { tid } => write!(f, "host thread {tid}"),
            LaneKind::GpuStream { gpu, stream } => write!(f, "GPU {gpu} stream {stream}"),
        }
    }
}

impl fmt::Display for LaneName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(rank) = &self.rank {
            write!(f, "rank {rank} ")?;
        }
        self.lane.fmt(f)
    }
}

/// Text that is not a lane's name as [`LaneName`]'s `Display` writes it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "not a lane's name: {0:?} (expected `host thread N` or `GPU N stream N`, after \
     `rank NAME ` where ranks were replayed together)"
)]
pub struct ParseLaneError(pub String);

impl FromStr for LaneKind {
    type Err = ParseLaneError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let bad = || ParseLaneError(s.to_owned());
        let number = |t: &str| t.parse::<i64>().map_err(|_| bad());
        if let Some(tid) = s.strip_prefix("host thread ") {
            return Ok(LaneKind::HostThread { tid: number(tid)? });
        }
        let rest = s.strip_prefix("GPU ").ok_or_else(bad)?;
        let (gpu, stream) = rest.split_once(" stream ").ok_or_else(bad)?;
        Ok(LaneKind::GpuStream {
            gpu: number(gpu)?,
            stream: number(stream)?,
        })
    }
}

impl FromStr for LaneName {
    type Err = ParseLaneError;

    /// Reads what `Display` writes. The row is the last `host thread …` or `GPU …` of the
    /// text that reads as one, so a rank's name may hold any words.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let bad = || ParseLaneError(s.to_owned());
        let row = ["host thread ", "GPU "]
            .iter()
            .filter_map(|word| s.rfind(word))
            .filter_map(|at| Some((at, s[at..].parse::<LaneKind>().ok()?)))
            .min_by_key(|&(at, _)| at);
        let (at, lane) = row.ok_or_else(bad)?;
        let rank = match &s[..at] {
            "" => None,
            before => Some(
                before
                    .strip_prefix("rank ")
                    .and_then(|r| r.strip_suffix(' '))
                    .filter(|r| !r.is_empty())
                    .ok_or_else(bad)?
                    .to_owned(),
            ),
        };
        Ok(LaneName { rank, lane })
    }
}

impl Serialize for LaneName {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for LaneName {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every shape reads back as the value that wrote it, a rank's name with spaces and
    /// lane words in it included; text that is no lane's name is an error.
    #[test]
    fn a_lane_name_reads_back_what_it_writes() {
        let stream = LaneKind::GpuStream { gpu: 0, stream: 7 };
        let host = LaneKind::HostThread { tid: -12 };
        for name in [
            LaneName {
                rank: None,
                lane: stream,
            },
            LaneName {
                rank: None,
                lane: host,
            },
            LaneName {
                rank: Some("1".into()),
                lane: host,
            },
            LaneName {
                rank: Some("GPU 3 stream 4 host thread 5".into()),
                lane: stream,
            },
        ] {
            let text = name.to_string();
            assert_eq!(text.parse::<LaneName>(), Ok(name.clone()), "{text}");
        }
        assert_eq!(
            LaneName {
                rank: Some("0".into()),
                lane: stream
            }
            .to_string(),
            "rank 0 GPU 0 stream 7"
        );
        for bad in [
            "",
            "stream 7",
            "GPU x stream 7",
            "rank host thread 1",
            "worker host thread 1",
            "host thread 1 ",
        ] {
            assert!(bad.parse::<LaneName>().is_err(), "{bad:?}");
        }
    }
}
