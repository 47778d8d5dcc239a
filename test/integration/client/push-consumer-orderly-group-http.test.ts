/** The orderly group scenario (orderly-group-cases.ts) over HTTP endpoints. */
import { describeOrderlyGroup } from './orderly-group-cases.js';

describeOrderlyGroup('http');
