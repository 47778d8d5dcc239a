/** The orderly group scenario (orderly-group-cases.ts) over TCP remoting through namesrvAddr. */
import { describeOrderlyGroup } from './orderly-group-cases.js';

describeOrderlyGroup('tcp');
