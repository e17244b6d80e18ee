/*
 * standalone.cuh - the glue a template gets when it is compiled on its own
 * (`nvcc -arch=sm_90 -c templates/<family>.cu`, for debugging): sum on float. Every template
 * includes it under `#ifndef RT_PRELUDE`; the code generator's units define RT_PRELUDE, so
 * NVRTC never opens this file (it is not embedded).
 */
#define RT_OP_SUM 1
#define RT_TYPE_F32 1
#define RT_COMMUTATIVE 1
typedef float rt_value_t;
typedef float rt_acc_t;
static __device__ __forceinline__ rt_acc_t rt_identity() { return 0.0f; }
static __device__ __forceinline__ rt_acc_t rt_combine(rt_acc_t a, rt_acc_t b) { return a + b; }
static __device__ __forceinline__ rt_acc_t rt_lift(rt_value_t v, unsigned long long i) { (void)i; return v; }
static __device__ __forceinline__ rt_acc_t rt_shfl_down(rt_acc_t a, unsigned int d) { return __shfl_down_sync(0xffffffffu, a, d); }
static __device__ __forceinline__ rt_acc_t rt_shfl_up(rt_acc_t a, unsigned int d) { return __shfl_up_sync(0xffffffffu, a, d); }
static __device__ __forceinline__ rt_acc_t rt_shfl(rt_acc_t a, int lane) { return __shfl_sync(0xffffffffu, a, lane); }
#define RT_FINAL_IS_IDENTITY 1
static __device__ __forceinline__ rt_acc_t rt_final(rt_acc_t a) { return a; }
#define RT_FINAL_IN_PLACE 1
typedef rt_acc_t rt_res_t;
