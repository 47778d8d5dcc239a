/**
 * TurnShare, how the remoting listener shares an event-loop turn between connections with frames left:
 * a turn's share is counted from its first frame, and deferred connections run on later turns, first
 * deferred first, each later turn within the same share.
 */
import { TurnShare } from '../../../src/broker/remoting/turn-share.js';

const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

test('a share is counted from the turn’s first frame and starts again on the next turn', async () => {
  const share = new TurnShare<string>(0, () => undefined);
  expect(share.spent()).toBe(false);
  expect(share.spent()).toBe(true);
  await nextTurn();
  await nextTurn();
  expect(share.spent()).toBe(false);
});

test('deferred items run on later turns, first deferred first, one share per turn', async () => {
  const ran: Array<{ item: string; turn: number }> = [];
  let turn = 0;
  const share = new TurnShare<string>(0, (item) => ran.push({ item, turn }));
  share.defer('a');
  share.defer('b');
  share.defer('c');
  share.defer('d');
  share.forget('c');
  expect(share.deferred).toBe(3);
  for (let i = 0; i < 20 && ran.length < 3; i++) {
    await nextTurn();
    turn++;
  }
  expect(ran.map((r) => r.item)).toEqual(['a', 'b', 'd']);
  // With a share of 0 ms, each turn runs the first waiting item only.
  expect(new Set(ran.map((r) => r.turn)).size).toBe(3);
  expect(share.deferred).toBe(0);
});

test('an item that defers itself again goes behind the others', async () => {
  const ran: string[] = [];
  const share = new TurnShare<string>(0, (item) => {
    ran.push(item);
    if (item === 'a' && ran.filter((x) => x === 'a').length < 2) share.defer('a');
  });
  share.defer('a');
  share.defer('b');
  for (let i = 0; i < 20 && ran.length < 3; i++) await nextTurn();
  expect(ran).toEqual(['a', 'b', 'a']);
});

test('items deferred for later run after the others, and at least one of them each turn', async () => {
  const ran: Array<{ item: string; turn: number }> = [];
  let turn = 0;
  const share = new TurnShare<string>(0, (item) => ran.push({ item, turn }));
  share.defer('new1', true);
  share.defer('a');
  share.defer('new2', true);
  share.defer('b');
  share.forget('new2');
  share.defer('new3', true);
  expect(share.deferred).toBe(4);
  for (let i = 0; i < 20 && ran.length < 4; i++) {
    await nextTurn();
    turn++;
  }
  // A share of 0 ms: each turn runs the first item of each lane.
  expect(ran.map((r) => r.item)).toEqual(['a', 'new1', 'b', 'new3']);
  expect(ran[0]?.turn).toBe(ran[1]?.turn);
  expect(ran[2]?.turn).toBe(ran[3]?.turn);
  expect(ran[2]?.turn).toBeGreaterThan(ran[0]?.turn ?? Infinity);
  expect(share.deferred).toBe(0);
});
