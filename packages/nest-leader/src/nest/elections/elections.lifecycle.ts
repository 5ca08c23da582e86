import {
  type BeforeApplicationShutdown,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
} from '@nestjs/common';
import { ElectionDirectory } from './election.directory.js';

/**
 * Starts every election of the application when it bootstraps (without blocking boot), and
 * stops them all in parallel when it shuts down: each refuses new `@LeaderOnly()` work, ends
 * its term, drains its own in-flight work (up to its `shutdownGraceMs`) and then releases its
 * own Lease.
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
      this.directory.all().map((election) => {
        election.orchestrator.close();
        return election.elector.stop();
      }),
    );
  }
}
