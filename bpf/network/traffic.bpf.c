/* network_traffic: bytes and packets received and transmitted by every
 * network device (loopback included), summed in per-CPU banks, and the
 * distribution of skb sizes per direction. tp_btf netif_receive_skb (after
 * GRO, so a merged skb counts as one packet of its merged length) and
 * net_dev_start_xmit (before the driver; a GSO skb counts once at its full
 * length). Layout mirrored in src/samplers/network/traffic/maps.ts. */
#include "common.h"
#include "counters.h"
#include "histogram.h"

#define BANK_WIDTH 8
#define RX_BYTES 0
#define RX_PACKETS 1
#define TX_BYTES 2
#define TX_PACKETS 3

#define SIZE_RECEIVE 0
#define SIZE_TRANSMIT 1

COUNTER_BANK(counters, BANK_WIDTH);
/* histogram 0 receive, 1 transmit */
HISTOGRAM_MAP(size, 2);

SEC("tp_btf/netif_receive_skb")
int BPF_PROG(netif_receive_skb, struct sk_buff *skb)
{
  u64 len = skb->len;
  counter_add(&counters, BANK_WIDTH, RX_BYTES, len);
  counter_add(&counters, BANK_WIDTH, RX_PACKETS, 1);
  histogram_add(&size, SIZE_RECEIVE, len);
  return 0;
}

SEC("tp_btf/net_dev_start_xmit")
int BPF_PROG(net_dev_start_xmit, const struct sk_buff *skb, const struct net_device *dev)
{
  u64 len = skb->len;
  counter_add(&counters, BANK_WIDTH, TX_BYTES, len);
  counter_add(&counters, BANK_WIDTH, TX_PACKETS, 1);
  histogram_add(&size, SIZE_TRANSMIT, len);
  return 0;
}
