import {
  BadRequestException,
  Controller,
  HttpCode,
  HttpStatus,
  Post,
  Query,
  UseGuards,
} from '@nestjs/common';
import { LoopbackOnlyGuard } from './loopback-only.guard.js';

/** Longest block `POST /debug/block-event-loop` accepts, ms. */
export const MAX_EVENT_LOOP_BLOCK_MS = 120_000;

/**
 * Fault-injection hooks for the chaos harness, registered only with `DEMO_DEBUG_HOOKS=1`, and
 * answering only requests that came over loopback (403 otherwise): a client that can reach the
 * HTTP port from elsewhere (another pod, the Service) cannot stall the process. Still, never
 * enable in production.
 */
@Controller('debug')
@UseGuards(LoopbackOnlyGuard)
export class DebugController {
  /**
   * Blocks the event loop for `ms` milliseconds (a busy wait), starting just after the answer
   * is sent — what a long GC pause or a starved CPU does to a replica: no timers, no I/O, no
   * renewals, and then everything that was due at once.
   * @throws BadRequestException unless `ms` is a whole number from 1 to {@link MAX_EVENT_LOOP_BLOCK_MS}.
   */
  @Post('block-event-loop')
  @HttpCode(HttpStatus.ACCEPTED)
  blockEventLoop(@Query('ms') raw: string | undefined): { blockMs: number; at: string } {
    const blockMs = Number(raw);
    if (!Number.isInteger(blockMs) || blockMs < 1 || blockMs > MAX_EVENT_LOOP_BLOCK_MS) {
      throw new BadRequestException(
        `ms must be a whole number from 1 to ${MAX_EVENT_LOOP_BLOCK_MS}, got "${raw}"`,
      );
    }
    // Let the 202 go out first; then nothing else runs until the block ends.
    setTimeout(() => {
      const until = performance.now() + blockMs;
      while (performance.now() < until) {
        // busy wait: the event loop is blocked
      }
    }, 20);
    return { blockMs, at: new Date().toISOString() };
  }
}
