// A module worker bundled by the same tool chain, loading the variant with the small GPT (as a page would train
// a model off its main thread).
import { init } from 'attnlab';
import { report } from '../check.js';

report(init, { gpt: true }).then((r) => postMessage(r));
