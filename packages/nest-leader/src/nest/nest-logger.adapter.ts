import type { LoggerService } from '@nestjs/common';
import type { ElectionLogger } from '../core/leader-elector.options.js';

/** The core's {@link ElectionLogger} on top of a Nest logger (`info` becomes `log`). */
export function toElectionLogger(logger: LoggerService): ElectionLogger {
  return {
    debug: (message) => logger.debug?.(message),
    info: (message) => logger.log(message),
    warn: (message) => logger.warn(message),
    error: (message) => logger.error(message),
  };
}
