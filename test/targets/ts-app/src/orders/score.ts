// Scores an order: a loop heavy enough to be a hot function of its own
// (see ../main.ts).
import type { Order } from './parse';

export function scoreOrder(order: Order, probe = false): number { if (probe) throw new Error('where');
  let score = order.id;
  for (let round = 0; round < 400; round++) {
    score = (score * 31 + order.quantity * order.price + round) % 1000003;
  }
  return score;
}
