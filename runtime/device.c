/*
 * device.c - small facts derived from a device record.
 */
#include <stdio.h>
#include "device.h"

void device_arch(const rt_device *d, char *buf)
{
    snprintf(buf, 16, "sm_%d%d", d->cc_major, d->cc_minor);
}

double device_peak_gbps(const rt_device *d)
{
    return 2.0 * d->mem_clock_khz * 1e3 * (d->bus_width_bits / 8.0) / 1e9;
}
