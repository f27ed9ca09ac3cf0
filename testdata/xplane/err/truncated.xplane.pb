
Ç/device:GPU:0"loop_multiply_fusion"73/sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_cublas"input_reduce_fusion*correlation_id*
hlo_op*
hlo_module*kernel_details*
program_id*step_num*device_vendor*
clock_rate*		
core_count*

memory_bandwidth*memory_size*compute_cap_major*compute_cap_minor*	Hlo ProtoStream #7(Kernel)€€¨¾ö”¿½"€‰z€›î""€¶Ü€›î""€ã¾
€›î""€¡€›î""€½ƒ€›î""€êå€›î""€—È€›î""€Äª"€›î""€ñŒ'€›î"	"€ï+€›î"
"€ËÑ0€›î""€ø³5€›î"
	/host:CPU"hipLaunchKernel"
train_step*correlation_id*
hlo_op*
hlo_module*kernel_details*
program_id*