/**
 * The types of a client's `on` / `once` / `off`: the same events and payloads as its `events` emitter,
 * returning the client, so code written for KafkaJS (`consumer.on('...', fn)`) reads the same here.
 */
import type { EventEmitter } from 'eventemitter3';

/** `client.on(event, fn)` / `client.once(event, fn)`: typed as `client.events.on`; returns the client. */
export type ClientEventListen<Events extends EventEmitter.ValidEventTypes, Client> = <
  T extends EventEmitter.EventNames<Events>,
>(
  event: T,
  fn: EventEmitter.EventListener<Events, T>,
) => Client;

/** `client.off(event, fn?)`: removes `fn`, or every listener of `event` when `fn` is left out. */
export type ClientEventUnlisten<Events extends EventEmitter.ValidEventTypes, Client> = <
  T extends EventEmitter.EventNames<Events>,
>(
  event: T,
  fn?: EventEmitter.EventListener<Events, T>,
) => Client;
