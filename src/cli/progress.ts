/**
 * A one-line progress bar on stderr, redrawn in place; lines printed meanwhile go above it. Only on a
 * terminal (or when asked for), so logs and pipes never get carriage returns.
 */
import type { Writable } from 'node:stream';
import type { Palette } from './output.js';

const WIDTH = 30;

export class ProgressBar {
  #done = 0;
  #failed = 0;
  #drawn = false;

  constructor(
    private readonly stream: Writable,
    private readonly total: number,
    private readonly color: Palette,
  ) {}

  tick(ok: boolean): void {
    this.#done++;
    if (!ok) this.#failed++;
    this.draw();
  }

  /** Prints a line above the bar. */
  above(write: () => void): void {
    this.clear();
    write();
    this.draw();
  }

  draw(): void {
    const filled = Math.round((this.#done / this.total) * WIDTH);
    const bar = this.color.green('█'.repeat(filled)) + this.color.dim('░'.repeat(WIDTH - filled));
    const failed = this.#failed > 0 ? this.color.red(` ${this.#failed} failed`) : '';
    const percent = Math.floor((this.#done / this.total) * 100);
    this.stream.write(`\r${bar} ${this.#done}/${this.total} ${percent}%${failed}\u001b[K`);
    this.#drawn = true;
  }

  clear(): void {
    if (this.#drawn) this.stream.write('\r\u001b[K');
    this.#drawn = false;
  }

  /** Leaves the final state of the bar on its own line. */
  finish(): void {
    if (this.#drawn) this.stream.write('\n');
    this.#drawn = false;
  }
}
