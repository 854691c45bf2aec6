/**
 * Group commit: work items that arrive while earlier ones are being written
 * wait and are then written together, in one transaction with one statement
 * per step, instead of one transaction each. Under load this turns dozens of
 * small transactions (each paying its round trips and its WAL flush) into one;
 * when idle an item starts at once (on the next turn of the event loop).
 *
 * Items whose conflict keys overlap never share a batch (they need each
 * other's effects, e.g. the second of two receives with one replay key must see
 * the first one's answer), so they go in order into later batches.
 */

export type Settled<R> = { ok: true; value: R } | { ok: false; error: unknown };

export interface GroupCommitOptions<T, R> {
  /** Writes a batch; answers one Settled per item, in order. */
  write(items: T[]): Promise<Settled<R>[]>;
  conflictKeys(item: T): string[];
  maxBatch: number;
  /** Batches written at once (each holds a database connection). */
  maxConcurrent: number;
}

interface Waiting<T, R> {
  item: T;
  resolve(value: R): void;
  reject(error: unknown): void;
}

export class GroupCommit<T, R> {
  private queue: Waiting<T, R>[] = [];
  private running = 0;
  private scheduled = false;

  constructor(private readonly options: GroupCommitOptions<T, R>) {}

  submit(item: T): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.queue.push({ item, resolve, reject });
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.scheduled || this.running >= this.options.maxConcurrent || this.queue.length === 0) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      this.startBatch();
    });
  }

  private startBatch(): void {
    if (this.running >= this.options.maxConcurrent || this.queue.length === 0) return;
    const batch: Waiting<T, R>[] = [];
    const later: Waiting<T, R>[] = [];
    const taken = new Set<string>();
    for (const waiting of this.queue) {
      const keys = this.options.conflictKeys(waiting.item);
      if (batch.length < this.options.maxBatch && !keys.some((key) => taken.has(key))) {
        batch.push(waiting);
        for (const key of keys) taken.add(key);
      } else {
        later.push(waiting);
      }
    }
    this.queue = later;
    this.running += 1;
    this.options
      .write(batch.map((waiting) => waiting.item))
      .then(
        (results) => results.forEach((result, i) => (result.ok ? batch[i]!.resolve(result.value) : batch[i]!.reject(result.error))),
        (error: unknown) => batch.forEach((waiting) => waiting.reject(error)),
      )
      .finally(() => {
        this.running -= 1;
        this.schedule();
      });
    this.schedule();
  }
}
