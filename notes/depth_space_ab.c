/* notes/depth_space_ab.c - A/B of DepthToSpace/SpaceToDepth's element loop (A) against the
 * explicit-vector loop (B, VEC=1) on the first OpenCL device: both operators in one context on the
 * same 64 MiB buffers, run alternately; prints each one's median GB/s (bytes read + written, from
 * profiling events) and the median of the per-round time ratios A/B (> 1: vectors faster).
 * Needs the static clops_testable (clops_operator_create_forced). W=<bytes> and OP=0|1 (D2S|S2D)
 * restrict the cases. Build and run: see notes/depth_space_perf.md. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "api/api.h"
static double secs(cl_event e){cl_ulong a=0,b=0;clGetEventProfilingInfo(e,CL_PROFILING_COMMAND_START,8,&a,NULL);clGetEventProfilingInfo(e,CL_PROFILING_COMMAND_END,8,&b,NULL);return (b-a)*1e-9;}
static int cmpd(const void*a,const void*b){double x=*(double*)a,y=*(double*)b;return x<y?-1:x>y;}
static double run(clops_operator*op,clops_buffers*b){cl_event e;clops_operator_execute(op,b,0,NULL,&e);clWaitForEvents(1,&e);double s=secs(e);clReleaseEvent(e);return s;}
int main(void){
  size_t bytes=64u<<20; int reps=9;
  cl_platform_id pl; cl_device_id dev; clGetPlatformIDs(1,&pl,NULL); clGetDeviceIDs(pl,CL_DEVICE_TYPE_ALL,1,&dev,NULL);
  cl_int err; cl_context cc=clCreateContext(NULL,1,&dev,NULL,NULL,&err); cl_command_queue q=clCreateCommandQueue(cc,dev,CL_QUEUE_PROFILING_ENABLE,&err);
  clops_context*ctx; clops_context_create_from_cl(cc,dev,q,&ctx);
  unsigned widths[]={1,2,4,8}; clops_data_type types[]={CLOPS_DATA_TYPE_UINT8,CLOPS_DATA_TYPE_FLOAT16,CLOPS_DATA_TYPE_FLOAT32,CLOPS_DATA_TYPE_FLOAT64};
  unsigned blocks[]={2,3,4,8};
  const char *onlyw=getenv("W"), *onlyop=getenv("OP");
  cl_mem bx=clCreateBuffer(cc,CL_MEM_READ_WRITE,bytes+4096,NULL,&err), by=clCreateBuffer(cc,CL_MEM_READ_WRITE,bytes+4096,NULL,&err);
  for(int op=0;op<2;op++) for(int ord=0;ord<2;ord++) for(int wi=0;wi<4;wi++) for(int bi=0;bi<4;bi++){
    if(onlyw && (unsigned)atoi(onlyw)!=widths[wi]) continue;
    if(onlyop && atoi(onlyop)!=op) continue;
    unsigned b=blocks[bi], es=widths[wi];
    uint64_t hw=bytes/es/4; unsigned side=1; while((uint64_t)(side+1)*(side+1)<=hw) side++; side=side/b*b;
    uint32_t deep[4]={1,4*b*b,side/b,side/b}, wide[4]={1,4,side,side};
    clops_tensor_desc in={types[wi],{0},NULL}, out={types[wi],{0},NULL};
    memcpy(in.sizes, op==0?deep:wide, 16); memcpy(out.sizes, op==0?wide:deep, 16);
    clops_depth_to_space_desc d={&in,&out,b,(clops_depth_space_order)ord};
    clops_operator_desc desc={op?CLOPS_OPERATOR_SPACE_TO_DEPTH:CLOPS_OPERATOR_DEPTH_TO_SPACE,&d};
    clops_operator *A=NULL,*B=NULL; const clops_tuning ta_={0,{0,0,0},CLOPS_LOOP_ELEMENTS}, tb_={0,{0,0,0},CLOPS_LOOP_VECTORS};
    if(clops_operator_create_forced(ctx,&desc,&ta_,&A)||clops_operator_create_forced(ctx,&desc,&tb_,&B)){fprintf(stderr,"create: %s\n",clops_last_error_message());return 1;}
    clops_buffers bb={bx,NULL,by}; run(A,&bb); run(B,&bb);
    double r[32], ta[32], tb[32];
    for(int k=0;k<reps;k++){ ta[k]=run(A,&bb); tb[k]=run(B,&bb); r[k]=ta[k]/tb[k]; }
    qsort(r,reps,8,cmpd); qsort(ta,reps,8,cmpd); qsort(tb,reps,8,cmpd);
    double mv=2.0*bytes/1e9;
    printf("%s %s w%u b%u  A %.1f GB/s  B %.1f GB/s  speedup B/A %.2f\n", op?"S2D":"D2S", ord?"CRD":"DCR", es,b, mv/ta[reps/2], mv/tb[reps/2], r[reps/2]);
    fflush(stdout);
    clops_operator_free(A); clops_operator_free(B);
  }
  return 0;
}
