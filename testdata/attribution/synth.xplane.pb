
ß/device:GPU:0"input_reduce_fusion_10"73/sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_cublas"loop_add_fusion_1"loop_mul_fusion_2"73/sm90_xmma_gemm_bf16bf16_bf16f32_f32_nn_n_cublas"loop_sin_fusion_4"'#ncclDevKernel_AllGather_RING_LL"loop_sin_fusion_4"'	#	ncclDevKernel_AllGather_RING_LL"

loop_sin_fusion_4"'#ncclDevKernel_AllGather_RING_LL"&"Memcpy DtoD (Device -> Device)"output_fusion_15"mystery_kernel"__amd_rocclr_copyBuffer*correlation_id*
hlo_op*
hlo_module*kernel_details*
program_id*step_num*device_vendor*
clock_rate*		
core_count*

memory_bandwidth*memory_size*compute_cap_major*compute_cap_minor*	Hlo Proto*memcpy_details*cuda_graph_id*jit_synth_step* »»input_reduce_fusion.10*……custom-call.11*  command_buffer.12*ÀÀcommand_buffer.12*ÃÃcommand_buffer.12*ÕÕloop_sin_fusion.4*ŒŒall-gather.34*œœloop_sin_fusion.4*––all-gather.34*——loop_sin_fusion.4*““all-gather.34*‘‘output_fusion.15⁄Stream #7(Compute)ÄîÎ‹"¿Ñ=ÄíÙ"8»"8" "ÄõÓ¿®•"8…"8" "$Ä»–Äâz"8 "8" " "$¿’á	Äâz"8À"8" " "%Ä„æ
ÄõÓ"8Ã"8" " "¿ÇÍ¿Ñ="8Õ"8" "¿ã‰¿ç∑"8Œ"8" "¿ùÿ¿Ñ="8œ"8" "	¿¶“¿ç∑"8–"8" "
¿∏∆¿Ñ="8—"8" "¿¡¿¿ç∑"8“"8" "†öê†Àò"8‘"8" "ÄÍÂ‡‹*"8" "†ÀÕ‡ß_Stream #8(MemcpyD2D)ÄîÎ‹"?¿”¥†¬"8" "&*"kind:DtoD size:4096 dest:0 async:1
«/device:GPU:1"input_reduce_fusion_10"73/sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_cublas"73/sm90_xmma_gemm_bf16bf16_bf16f32_f32_tt_n_cublas*correlation_id*
hlo_op*
hlo_module*kernel_details*
program_id*step_num*device_vendor*
clock_rate*		
core_count*

memory_bandwidth*memory_size*compute_cap_major*compute_cap_minor*	Hlo Proto*memcpy_details*cuda_graph_id*jit_synth_step*……custom-call.11pStream #7(Compute)ÄîÎ‹"¿Ñ=ÄíÙ"8" "ÄõÓ¿®•"8…"8" "Ä»–¿ñ±"8" Stream #8(MemcpyD2D)ÄîÎ‹
Ác/host:metadata"œ
 
jit_synth_step(7)*¨
2ß

§

jit_synth_stepmain$
	fused_add
p.1	parameterò(0†
command_buffer
p.2	parameteròI
loop_add_fusion.1fusion:&jit(step)/add/work/synth_step.py ò∞I
loop_mul_fusion.2fusion:&jit(step)/mul/work/synth_step.py ò∞_
custom-call.5custom-call:.jit(step)/dot_general/work/synth_step.py ‚__cublas$gemmò(0Ω
body
p.3	parameteròT
loop_sin_fusion.4fusion:1jit(step)/while/body/sin/work/synth_step.py ò∞c
all-gather-start.6all-gather-start:8jit(step)/while/body/all_gather/work/synth_step.py òa
all-gather-done.6all-gather-done:8jit(step)/while/body/all_gather/work/synth_step.py ò	(0	3
cond
p.4	parameterò

c.4constantò(0…
main
p0	parameteròU
input_reduce_fusion.10fusion:-jit(step)/reduce_sum/work/synth_step.py ò∞`
custom-call.11custom-call:.jit(step)/dot_general/work/synth_step.py ‚__cublas$gemmò
command_buffer.12callò∞e
while.13while:(jit(step)/while/work/synth_step.py ò∞∞⁄{"known_trip_count":{"n":"3"}};
copy.14copy:'jit(step)/copy/work/synth_step.py òI
output_fusion.15fusion:'jit(step)/tanh/work/synth_step.py ò∞`
custom-call.16custom-call:.jit(step)/dot_general/work/synth_step.py  ‚__cublas$gemmò(0(0* "œ
 
jit_synth_step(8)*¨
2ß

§

jit_synth_stepmain$
	fused_add
p.1	parameterò(0†
command_buffer
p.2	parameteròI
loop_add_fusion.1fusion:&jit(step)/add/work/synth_step.py ò∞I
loop_mul_fusion.2fusion:&jit(step)/mul/work/synth_step.py ò∞_
custom-call.5custom-call:.jit(step)/dot_general/work/synth_step.py ‚__cublas$gemmò(0Ω
body
p.3	parameteròT
loop_sin_fusion.4fusion:1jit(step)/while/body/sin/work/synth_step.py ò∞c
all-gather-start.6all-gather-start:8jit(step)/while/body/all_gather/work/synth_step.py òa
all-gather-done.6all-gather-done:8jit(step)/while/body/all_gather/work/synth_step.py ò	(0	3
cond
p.4	parameterò

c.4constantò(0…
main
p0	parameteròU
input_reduce_fusion.10fusion:-jit(step)/reduce_sum/work/synth_step.py ò∞`
custom-call.11custom-call:.jit(step)/dot_general/work/synth_step.py ‚__cublas$gemmò
command_buffer.12callò∞e
while.13while:(jit(step)/while/work/synth_step.py ò∞∞⁄{"known_trip_count":{"n":"3"}};
copy.14copy:'jit(step)/copy/work/synth_step.py òI
output_fusion.15fusion:'jit(step)/tanh/work/synth_step.py ò∞`
custom-call.16custom-call:.jit(step)/dot_general/work/synth_step.py  ‚__cublas$gemmò(0(0* *correlation_id*
hlo_op*
hlo_module*kernel_details*
program_id*step_num*device_vendor*
clock_rate*		
core_count*

memory_bandwidth*memory_size*compute_cap_major*compute_cap_minor*	Hlo Proto