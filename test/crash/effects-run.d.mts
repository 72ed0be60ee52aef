// Types of effects-run.mjs, for test/crash/exactly-once.test.ts.
export interface CrashableServer {
  url: string;
  /** `pg_ctl -m immediate` stop, then start again on the same port. */
  crash(): Promise<void>;
}
export interface EffectsFigures {
  mode: 'transaction' | 'own';
  events: number;
  killedFirstWorkerAt?: number;
  crashedPostgresAt?: number;
  killedSecondWorkerAt?: number;
  /** When each step was done and when the last delivery was answered, ms from the start. */
  killedFirstWorkerAtMs?: number;
  crashedPostgresAtMs?: number;
  killedSecondWorkerAtMs?: number;
  sentMs?: number;
  elapsedMs: number;
  acknowledged: number;
  effectRows: number;
  exactlyOne: number;
  missing: number;
  doubledEvents: number;
  extraRows: number;
  ranAgain: number;
  dead: number;
  stored: number;
  resent: number;
  /** Receivers and workers that ended by themselves (not killed by the run), with the end of their stderr. */
  unexpectedExits: string[];
}
export declare function effectsRun(options: {
  server: CrashableServer;
  events: number;
  mode: 'transaction' | 'own';
  concurrency?: number;
  /** Deliveries sent per second (the run's steps land while events arrive). Default 200. */
  perSecond?: number;
  timeoutMs?: number;
}): Promise<EffectsFigures>;
export declare function rerunAfterKill(options: { server: CrashableServer; mode: 'transaction' | 'own'; leaseMs: number; dir: string }): Promise<number>;
