/** Shared arrangements of the Nest layer's unit tests: replicas on a MemoryLock and a ManualClock. */
import 'reflect-metadata';
import type { INestApplication, LoggerService, ModuleMetadata } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { LeaderElectionService, LeaderModule, type LeaderModuleOptions } from 'nest-leader';
import { ManualClock, MemoryLock } from 'nest-leader/testing';

export const LEASE_NAME = 'unit-lease';
export const SELF = 'pod-a';
export const OTHER = 'pod-b';

export interface Replica {
  app: INestApplication;
  election: LeaderElectionService;
  lock: MemoryLock;
  clock: ManualClock;
}

export interface ReplicaOptions extends ModuleMetadata {
  /**
   * `leader`: waits until this replica leads; `follower`: OTHER holds the Lease first;
   * `candidate`: the Lease is left as it is (another replica's, say).
   */
  role: 'leader' | 'follower' | 'candidate';
  lock?: MemoryLock;
  clock?: ManualClock;
  leader?: Partial<LeaderModuleOptions>;
  /** Listen on an ephemeral port (for real HTTP requests). */
  listen?: boolean;
  logger?: LoggerService | false;
  /** Logger while the module compiles (providers are built then); default Nest's testing logger. */
  compileLogger?: LoggerService;
}

/** The Lease as held by another, live candidate. */
export function holdLeaseAs(
  lock: MemoryLock,
  clock: ManualClock,
  holderIdentity: string,
  leaseTransitions = 0,
): void {
  const now = clock.wallNow();
  lock.set({
    holderIdentity,
    leaseDurationSeconds: 15,
    acquireTime: now,
    renewTime: now,
    leaseTransitions,
  });
}

/** Creates, initializes (and optionally listens on) one replica in the given role. */
export async function startReplica(options: ReplicaOptions): Promise<Replica> {
  const {
    role,
    listen,
    logger = false,
    compileLogger,
    leader,
    imports = [],
    lock = new MemoryLock(),
    clock = new ManualClock(),
    ...metadata
  } = options;
  if (role === 'follower') holdLeaseAs(lock, clock, OTHER);
  const builder = Test.createTestingModule({
    ...metadata,
    imports: [
      ...imports,
      LeaderModule.forRoot({ leaseName: LEASE_NAME, identity: SELF, lock, clock, ...leader }),
    ],
  });
  if (compileLogger) builder.setLogger(compileLogger);
  const moduleRef = await builder.compile();
  const app = moduleRef.createNestApplication({ logger });
  if (listen) await app.listen(0, '127.0.0.1');
  else await app.init();
  const election = app.get(LeaderElectionService);
  if (role === 'leader') await election.waitForLeadership();
  else await clock.settle();
  return { app, election, lock, clock };
}

/** Base URL of a listening replica. */
export async function baseUrl(app: INestApplication): Promise<string> {
  return (await app.getUrl()).replace('[::1]', '127.0.0.1');
}

/** A promise with its resolve function, for work the test finishes by hand. */
export function deferred<T = void>(): { promise: Promise<T>; resolve: (value: T) => void } {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}
