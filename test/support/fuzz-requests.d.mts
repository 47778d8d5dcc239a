export interface FuzzCommand {
  name: string;
  code: number;
  fields: Array<{ name: string; kind: 'string' | 'number' | 'boolean' | 'other' }>;
  jsonBody: boolean;
}
export interface FuzzRequest {
  path: string;
  method: string;
  body: Buffer | undefined;
  /** The command (or kind of oddity) the request is about, for reports. */
  command: string;
}
export function seededRandom(seed: number): () => number;
export function describeCommands(commands: ReadonlyMap<number, unknown>): FuzzCommand[];
export function createFuzzer(options: {
  commands: FuzzCommand[];
  encodeFrame: (header: unknown, body?: Buffer) => Buffer;
  random: () => number;
  topics: string[];
  groups: string[];
}): () => FuzzRequest;
