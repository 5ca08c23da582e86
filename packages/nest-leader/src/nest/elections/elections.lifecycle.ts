import {
  type BeforeApplicationShutdown,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
} from '@nestjs/common';
import { ElectionDirectory } from './election.directory.js';

/**
 * Starts every election of the application when it bootstraps (without blocking boot), and
 * stops them all in parallel when it shuts down: each ends its term, drains its own in-flight
 * work (up to its `shutdownGraceMs`), hands off or releases its own Lease, and then refuses
 * new `@LeaderOnly()` work for good.
 *
 * The work is refused when the term ends, not when shutdown begins: a leader stopped by a
 * rollout leads on — renewing, its `@LeaderOnly()` work running — while it waits for a new
 * replica to hand to (`LeaderElector.stop`), and refusing the work then would leave the
 * application without a leader doing the work for that wait, though its Lease and role label
 * still name it. Once the term ended the gate refuses new work anyway (no live term).
 */
@Injectable()
export class ElectionsLifecycle implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger('LeaderElection');

  constructor(private readonly directory: ElectionDirectory) {}

  onApplicationBootstrap(): void {
    for (const election of this.directory.all()) {
      this.logger.log(election.startMessage);
      election.elector.start();
    }
  }

  async beforeApplicationShutdown(): Promise<void> {
    await Promise.all(
      this.directory.all().map(async (election) => {
        await election.elector.stop();
        election.orchestrator.close();
      }),
    );
  }
}
