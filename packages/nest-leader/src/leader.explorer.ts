import { Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import { DiscoveryService, MetadataScanner } from '@nestjs/core';
import type { InstanceWrapper } from '@nestjs/core/injector/instance-wrapper.js';
import { leaderMetadata } from './leader-metadata.accessor.js';
import { LeaderOnlyGate } from './leader-only.gate.js';
import { leaderOnlyRegistry } from './leader-only.registry.js';
import { LeadershipEventsDispatcher } from './leadership-events.dispatcher.js';
import { nestMessages } from './messages.js';

/**
 * Finds, on every provider and controller, the `@LeaderOnly()` methods (and binds their
 * instances to this application's {@link LeaderOnlyGate}) and the leadership event handlers
 * (and adds them to the {@link LeadershipEventsDispatcher}).
 */
@Injectable()
export class LeaderExplorer implements OnModuleInit {
  private readonly logger = new Logger('LeaderElection');

  constructor(
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
    private readonly gate: LeaderOnlyGate,
    private readonly events: LeadershipEventsDispatcher,
  ) {}

  onModuleInit(): void {
    for (const wrapper of [...this.discovery.getControllers(), ...this.discovery.getProviders()]) {
      this.explore(wrapper);
    }
  }

  private explore(wrapper: InstanceWrapper): void {
    const isStatic = wrapper.isDependencyTreeStatic();
    const instance: unknown = wrapper.instance;
    // Request-scoped and transient classes have no single instance: bind their prototype.
    const prototype: unknown = isStatic
      ? isObject(instance) && Object.getPrototypeOf(instance)
      : wrapper.metatype?.prototype;
    if (!isObject(prototype)) return;

    let hasLeaderOnly = false;
    for (const methodName of this.scanner.getAllMethodNames(prototype)) {
      const method: unknown = Reflect.get(prototype, methodName);
      hasLeaderOnly ||= leaderMetadata.leaderOnly(method) !== undefined;
      const handlerName = `${prototype.constructor.name}.${methodName}`;
      for (const event of leaderMetadata.leadershipEvents(method)) {
        if (!isStatic) {
          this.logger.warn(nestMessages.nonStaticHandler(handlerName));
          continue;
        }
        this.events.add(event, {
          name: handlerName,
          call: (payload) =>
            (instance as Record<string, (payload: unknown) => unknown>)[methodName](payload),
        });
      }
    }
    if (hasLeaderOnly) {
      leaderOnlyRegistry.bind(isStatic ? (instance as object) : prototype, this.gate);
    }
  }
}

function isObject(value: unknown): value is object {
  return typeof value === 'object' && value !== null;
}
