/**
 * Which system goes first. The machine drifts (page cache, CPU frequency, other processes), so no system
 * may always run first: every measurement of bench:compare takes its order from one shared sequence that
 * alternates from round to round and carries on from one measurement to the next, so a measurement with an
 * odd number of rounds leaves the other system first for the next one.
 */
export type Side = 'kvlog' | 'etcd'

export const SIDES: readonly Side[] = ['kvlog', 'etcd']

/** The n-th round's order overall (0, 1, 2, ...). */
export function orderOf(n: number): [Side, Side] {
  return n % 2 === 0 ? ['kvlog', 'etcd'] : ['etcd', 'kvlog']
}

/** The sequence of orders; one per process (`ORDER`) so every workload continues it. */
export class Order {
  private n = 0

  next(): [Side, Side] {
    return orderOf(this.n++)
  }
}

export const ORDER = new Order()

/** Each run's result per side, in round order. */
export interface Runs<T> {
  kvlog: T[]
  etcd: T[]
}

/** fn on both sides, `count` rounds, each round's order the next of `order`. */
export async function rounds<T>(count: number, fn: (side: Side) => Promise<T>, order: Order = ORDER): Promise<Runs<T>> {
  const out: Runs<T> = { kvlog: [], etcd: [] }
  for (let round = 0; round < count; round++) {
    for (const side of order.next()) out[side].push(await fn(side))
  }
  return out
}
