
/device:GPU:ÿþ