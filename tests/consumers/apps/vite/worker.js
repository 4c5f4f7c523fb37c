// A module worker bundled by the same tool chain.
import { init } from 'attnlab';
import { report } from '../check.js';

report(init).then((r) => postMessage(r));
