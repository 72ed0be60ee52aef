/**
 * The coordination operations of the port (catch-up's leased lock and high-water marks) held in this
 * process's memory: the memory inbox's, which is shared by nobody else anyway.
 */
export class LocalCoordination {
  readonly #locks = new Map<string, { holder: string; until: number }>();
  readonly #marks = new Map<string, number>();

  tryLock(name: string, holder: string, ttlMs: number): boolean {
    const now = Date.now();
    const lock = this.#locks.get(name);
    if (lock && lock.holder !== holder && lock.until > now) return false;
    this.#locks.set(name, { holder, until: now + ttlMs });
    return true;
  }

  unlock(name: string, holder: string): void {
    if (this.#locks.get(name)?.holder === holder) this.#locks.delete(name);
  }

  mark(name: string): number | undefined {
    return this.#marks.get(name);
  }

  setMark(name: string, value: number): void {
    this.#marks.set(name, Math.max(value, this.#marks.get(name) ?? value));
  }
}
