/*
 * device.h - what redtune knows of a GPU. Filled by the worker from the driver, passed to Lua
 * spaces as the table `dev`, stored in the database with every measurement.
 */
#ifndef RT_DEVICE_H
#define RT_DEVICE_H

typedef struct rt_device {
    int ordinal;
    char name[256];
    int cc_major, cc_minor;
    int sm_count;
    int warp_size;
    int max_threads_per_block;
    int max_threads_per_sm;
    int max_blocks_per_sm;
    int smem_per_block;          /* bytes available without opt-in */
    int smem_per_block_optin;    /* bytes with cudaFuncSetAttribute opt-in */
    int smem_per_sm;
    int regs_per_block;
    int regs_per_sm;
    int l2_bytes;
    int mem_clock_khz;
    int bus_width_bits;
    int driver_version;          /* e.g. 13000 */
    long long total_mem;         /* bytes */
    char uuid[40];               /* hex, no dashes */
} rt_device;

/* "sm_90" for compute capability 9.0; 'buf' holds at least 16 bytes. */
void device_arch(const rt_device *d, char *buf);

/* Theoretical DRAM bandwidth from memory clock and bus width, GB/s (DDR: two transfers a clock). */
double device_peak_gbps(const rt_device *d);

#endif
