/* blockio_requests: completed block requests by op (read, write, flush,
 * discard): operations, bytes, a size histogram, errors by kind, and
 * requeues. tp_btf hooks only. Layout mirrored in
 * src/samplers/blockio/requests/maps.ts. */
#include "common.h"
#include "counters.h"
#include "histogram.h"

/* Ops: the low 8 bits of cmd_flags (enum req_op); others are not counted. */
#define OPS 4
#define REQ_OP_BITS_MASK 0xff

/* Error kinds, in the order of the sampler's labels. */
#define ERR_IO 0
#define ERR_TIMEOUT 1
#define ERR_NOSPC 2
#define ERR_TARGET 3
#define ERR_PROTECTION 4
#define ERR_UNSUPPORTED 5
#define ERR_OTHER 6
#define ERR_KINDS 7

/* Per-CPU bank slots: 4 ops each of operations, bytes, requeues, then
 * 4 ops x 7 error kinds: 40 slots, 5 cache lines. */
#define OPERATIONS 0
#define BYTES 4
#define REQUEUES 8
#define ERRORS 12
#define BANK_WIDTH 40

/* blk_status_t values (include/linux/blk_types.h; #defines, so not in
 * vmlinux.h). Stable since 4.13; 6 was BLK_STS_NEXUS before 6.5. */
#define BLK_STS_NOTSUPP 1
#define BLK_STS_TIMEOUT 2
#define BLK_STS_NOSPC 3
#define BLK_STS_TRANSPORT 4
#define BLK_STS_TARGET 5
#define BLK_STS_RESV_CONFLICT 6
#define BLK_STS_MEDIUM 7
#define BLK_STS_PROTECTION 8
#define BLK_STS_RESOURCE 9
#define BLK_STS_IOERR 10

HISTOGRAM_MAP(size, OPS);
COUNTER_BANK(counters, BANK_WIDTH);

/* The op of a request, or OPS when it is none of the four counted. */
static __always_inline u32 request_op(struct request *rq)
{
  u32 op = rq->cmd_flags & REQ_OP_BITS_MASK;
  return op < OPS ? op : OPS;
}

/* Rezolus's classification of a non-OK status. */
static __always_inline u32 error_kind(u8 status)
{
  switch (status) {
  case BLK_STS_IOERR:
  case BLK_STS_MEDIUM:
    return ERR_IO;
  case BLK_STS_TIMEOUT:
    return ERR_TIMEOUT;
  case BLK_STS_NOSPC:
    return ERR_NOSPC;
  case BLK_STS_TARGET:
  case BLK_STS_RESV_CONFLICT:
    return ERR_TARGET;
  case BLK_STS_PROTECTION:
    return ERR_PROTECTION;
  case BLK_STS_NOTSUPP:
    return ERR_UNSUPPORTED;
  default:
    return ERR_OTHER;
  }
}

SEC("tp_btf/block_rq_complete")
int BPF_PROG(block_rq_complete, struct request *rq, blk_status_t error, unsigned int nr_bytes)
{
  u32 op = request_op(rq);
  if (op >= OPS) return 0;
  counter_add(&counters, BANK_WIDTH, OPERATIONS + op, 1);
  if (nr_bytes) {
    counter_add(&counters, BANK_WIDTH, BYTES + op, nr_bytes);
    histogram_add(&size, op, nr_bytes);
  }
  if (error) counter_add(&counters, BANK_WIDTH, ERRORS + op * ERR_KINDS + error_kind(error), 1);
  return 0;
}

SEC("tp_btf/block_rq_requeue")
int BPF_PROG(block_rq_requeue, struct request *rq)
{
  u32 op = request_op(rq);
  if (op < OPS) counter_add(&counters, BANK_WIDTH, REQUEUES + op, 1);
  return 0;
}
