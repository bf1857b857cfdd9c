// gpuprobe: what a process sees of the GPUs, for the GPU device check (bench/gpu-container.sh).
//   gpuprobe list                 the devices, their names and memory
//   gpuprobe fill CHUNK_MIB [HOLD_S]  allocate and touch CHUNK_MIB at a time until CUDA
//                                 refuses; prints how much it got and the error that stopped
//                                 it, then keeps it all for HOLD_S seconds
//   gpuprobe burn SECONDS         keep device 0 busy for SECONDS (for utilization readings)
//   gpuprobe hold MIB SECONDS     hold MIB of device memory for SECONDS
// Built on the GPU machine with `nvcc -O2 -cudart static`, so it needs only libcuda.so.1.
#include <cuda_runtime.h>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <vector>

__global__ void spin(float *x, long iters) {
    float v = x[threadIdx.x];
    for (long i = 0; i < iters; i++) v = v * 0.999999f + 0.000001f;
    x[threadIdx.x] = v;
}

static int list() {
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess) {
        printf("devices: 0 (%s)\n", cudaGetErrorString(e));
        return 3;
    }
    printf("devices: %d\n", n);
    for (int i = 0; i < n; i++) {
        cudaDeviceProp p;
        cudaGetDeviceProperties(&p, i);
        size_t f = 0, t = 0;
        cudaSetDevice(i);
        cudaMemGetInfo(&f, &t);
        printf("device %d: %s, %zu MiB total, %zu MiB free, %d SMs\n", i, p.name, t >> 20, f >> 20,
               p.multiProcessorCount);
    }
    return n > 0 ? 0 : 3;
}

static int fill(size_t chunk_mib, double hold_s) {
    std::vector<void *> held;
    size_t got = 0;
    for (;;) {
        void *p = nullptr;
        cudaError_t e = cudaMalloc(&p, chunk_mib << 20);
        if (e == cudaSuccess) e = cudaMemset(p, 1, chunk_mib << 20);
        if (e == cudaSuccess) e = cudaDeviceSynchronize();
        if (e != cudaSuccess) {
            printf("fill: %zu MiB allocated, then %s (%s)\n", got, cudaGetErrorName(e),
                   cudaGetErrorString(e));
            fflush(stdout);
            struct timespec ts = {(time_t)hold_s, 0};
            nanosleep(&ts, nullptr);
            return e == cudaErrorMemoryAllocation ? 0 : 4;
        }
        held.push_back(p);
        got += chunk_mib;
    }
}

static int burn(double seconds) {
    float *x;
    if (cudaMalloc(&x, 1024 * sizeof(float)) != cudaSuccess) return 5;
    time_t end = time(nullptr) + (time_t)seconds;
    long rounds = 0;
    while (time(nullptr) < end) {
        spin<<<1024, 1024>>>(x, 1 << 20);
        cudaDeviceSynchronize();
        rounds++;
    }
    cudaError_t e = cudaGetLastError();
    printf("burn: %ld rounds, %s\n", rounds, cudaGetErrorName(e));
    return e == cudaSuccess ? 0 : 6;
}

static int hold(size_t mib, double seconds) {
    void *p = nullptr;
    cudaError_t e = cudaMalloc(&p, mib << 20);
    if (e == cudaSuccess) e = cudaMemset(p, 1, mib << 20);
    printf("hold: %zu MiB %s\n", mib, cudaGetErrorName(e));
    fflush(stdout);
    struct timespec ts = {(time_t)seconds, 0};
    nanosleep(&ts, nullptr);
    return e == cudaSuccess ? 0 : 7;
}

int main(int argc, char **argv) {
    setvbuf(stdout, nullptr, _IOLBF, 0);
    const char *mode = argc > 1 ? argv[1] : "list";
    if (!strcmp(mode, "list")) return list();
    if (!strcmp(mode, "fill")) return fill(argc > 2 ? atol(argv[2]) : 1024, argc > 3 ? atof(argv[3]) : 0);
    if (!strcmp(mode, "burn")) return burn(argc > 2 ? atof(argv[2]) : 10);
    if (!strcmp(mode, "hold")) return hold(argc > 2 ? atol(argv[2]) : 1024, argc > 3 ? atof(argv[3]) : 10);
    fprintf(stderr, "usage: gpuprobe list|fill MIB|burn S|hold MIB S\n");
    return 2;
}
