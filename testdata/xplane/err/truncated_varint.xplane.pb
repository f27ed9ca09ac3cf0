
Ç/device:GPU:0"loop_multiÿÿ