import { SendAccumulator } from '../../../../src/client/producer/send-accumulator.js';

/** An accumulator whose end-of-turn runs are queued here and run by hand. */
function setup(maxMessages = 4, maxBytes = 100) {
  const handed: { key: string; items: string[] }[] = [];
  const turns: (() => void)[] = [];
  const acc = new SendAccumulator<string>(
    { maxMessages, maxBytes },
    (key, items) => handed.push({ key, items }),
    (run) => turns.push(run),
  );
  const endTurn = () => {
    const runs = turns.splice(0);
    for (const run of runs) run();
  };
  return { acc, handed, turns, endTurn };
}

test('the items of one turn are handed over together at its end, per key, in the order added', () => {
  const { acc, handed, turns, endTurn } = setup();
  acc.add('A', 'a1', 10);
  acc.add('B', 'b1', 10);
  acc.add('A', 'a2', 10);
  expect(handed).toEqual([]);
  expect(turns).toHaveLength(1); // one end-of-turn run for every group
  endTurn();
  expect(handed).toEqual([
    { key: 'A', items: ['a1', 'a2'] },
    { key: 'B', items: ['b1'] },
  ]);
  endTurn();
  expect(handed).toHaveLength(2);
});

test('a lone item is handed over alone; the next turn starts new groups', () => {
  const { acc, handed, endTurn } = setup();
  acc.add('A', 'a1', 10);
  endTurn();
  acc.add('A', 'a2', 10);
  endTurn();
  expect(handed).toEqual([
    { key: 'A', items: ['a1'] },
    { key: 'A', items: ['a2'] },
  ]);
});

test('a group is handed over as soon as it has maxMessages items', () => {
  const { acc, handed, endTurn } = setup(3);
  for (let i = 1; i <= 7; i++) acc.add('A', `a${i}`, 1);
  expect(handed).toEqual([
    { key: 'A', items: ['a1', 'a2', 'a3'] },
    { key: 'A', items: ['a4', 'a5', 'a6'] },
  ]);
  endTurn();
  expect(handed.at(-1)).toEqual({ key: 'A', items: ['a7'] });
  expect(handed).toHaveLength(3);
});

test('an item that would take a group over maxBytes starts the next group; a larger one goes alone', () => {
  const { acc, handed, endTurn } = setup(10, 100);
  acc.add('A', 'a1', 60);
  acc.add('A', 'a2', 40); // exactly 100: still one group
  acc.add('A', 'a3', 1); // over: a1 and a2 go now
  expect(handed).toEqual([{ key: 'A', items: ['a1', 'a2'] }]);
  acc.add('A', 'big', 101); // alone, at once; a3 keeps waiting for its turn's end
  expect(handed.at(-1)).toEqual({ key: 'A', items: ['big'] });
  endTurn();
  expect(handed.at(-1)).toEqual({ key: 'A', items: ['a3'] });
  expect(handed).toHaveLength(3);
});

test('flush hands over every open group now, and the turn end then finds nothing', () => {
  const { acc, handed, endTurn } = setup();
  acc.add('A', 'a1', 1);
  acc.add('B', 'b1', 1);
  acc.flush();
  expect(handed.map((h) => h.key)).toEqual(['A', 'B']);
  endTurn();
  expect(handed).toHaveLength(2);
  acc.flush();
  expect(handed).toHaveLength(2);
});

test('a group handed over because it filled up is not handed over again at the turn end', () => {
  const { acc, handed, endTurn } = setup(2);
  acc.add('A', 'a1', 1);
  acc.add('B', 'b1', 1);
  acc.add('A', 'a2', 1); // A is full
  endTurn();
  expect(handed).toEqual([
    { key: 'A', items: ['a1', 'a2'] },
    { key: 'B', items: ['b1'] },
  ]);
});

test('with the default scheduler, the items of one synchronous run go out together after it', async () => {
  const handed: number[][] = [];
  const acc = new SendAccumulator<number>({ maxMessages: 100, maxBytes: 1000 }, (_k, items) => handed.push(items));
  for (let i = 0; i < 5; i++) acc.add('T', i, 1);
  expect(handed).toEqual([]);
  await new Promise<void>((resolve) => setImmediate(resolve));
  expect(handed).toEqual([[0, 1, 2, 3, 4]]);
});
