// What the learn lab says about each task: the task, the example the heads are drawn on, and (induction) why its
// loss drops suddenly. Text only: the numbers come from the task's definition (model/train-tasks.ts).
import { el, clear } from '../../ui/dom';
import { INDUCTION, inductionExample, type TaskName } from '../../model/train-tasks';
import { EXAMPLE_TOKENS } from '../../model/text-task';

/** Fills the task's description, the example's note and the "why" panel for `task`. */
export function describeTask(task: TaskName, { taskText, exampleNote, why }: { taskText: HTMLElement; exampleNote: HTMLElement; why: HTMLElement }): void {
  clear(taskText); clear(why);
  if (task === 'induction') {
    const ex = inductionExample();
    taskText.append(el('p', { text: `Each sequence is a block of ${INDUCTION.minBlock} to ${INDUCTION.maxBlock} random tokens (numbers 0–${INDUCTION.vocab - 1}), repeated once. The first copy cannot be predicted; the repeat can, by anyone who looks back: find where the current token appeared before and copy the token that followed it. A model of 2 attention-only layers with rotary positions learns exactly that.` }));
    exampleNote.textContent = `The example: a block of ${ex.ids.length / 2} random tokens and its repeat (${Array.from(ex.ids.subarray(0, ex.ids.length / 2)).join(' ')} | ${Array.from(ex.ids.subarray(ex.ids.length / 2)).join(' ')}). A previous-token head lights up the stripe just left of the diagonal. An induction head lights up, in the repeat’s rows (${ex.ids.length / 2 + 1}–${ex.ids.length}), a stripe ${ex.ids.length / 2 - 1} columns left of the diagonal: each of those tokens looks at the token just after its own earlier occurrence.`;
    why.append(
      el('h4', { text: 'Why the loss drops suddenly' }),
      el('p', { text: 'Copying the repeat takes two heads working together. One in layer 1 writes into every position which token came just before it (a previous-token head). One in layer 2 then looks, from the current token, for the position whose predecessor is that same token, the token after its earlier occurrence, and copies it forward (an induction head). Neither helps much without the other, so for hundreds of steps the repeat’s loss stays near the loss of guessing; once the two line up it falls within about a hundred steps. This circuit was found in real language models (“In-context Learning and Induction Heads”, Olsson et al., 2022).' }),
    );
  } else if (task === 'text') {
    taskText.append(el('p', { text: 'Your own text, or a sample of the text the page’s shipped model learned from. The model learns to predict each next token of it; below, it writes as it trains, from nonsense to words to the text’s own turns of phrase.' }));
    exampleNote.textContent = `Each small square is one head on the first ${EXAMPLE_TOKENS} tokens of the text, as the tokenizer cut them; brighter means more weight. Choose one to see it large with its tokens.`;
  } else {
    taskText.append(el('p', { text: 'Sentences from a small grammar written for this page, in which the articles’ examples recur. The model learns to predict each next word. Some words can only be predicted by looking back: after “the capital of Spain is” comes “madrid”, and only “spain”, two words before it, says so. Nobody tells a head where to look; training finds it. Type your own sentence below and see where each head looks from its last word.' }));
    exampleNote.textContent = 'Each small square is one head on your sentence; brighter means more weight. Choose one to see it large with its words.';
  }
}
