// Example sentences from the articles the explorer follows (see “Further reading” on the page), offered as
// presets in the attention lab.

export interface Example {
  label: string;
  text: string;
  /** Index of the token to focus the one-query walk-through on. */
  query: number;
  note: string;
}

export const EXAMPLES: Example[] = [
  { label: 'Houston', text: 'Houston we have a problem', query: 2,
    note: 'From “Self-attention”: “have” means something else after “Houston, we” than in “we’ll always have”.' },
  { label: 'banana + apple', text: 'I ate a banana and an apple', query: 6,
    note: 'From the words-pulling-words article: “banana” pulls “apple” towards the fruits.' },
  { label: 'phone + apple', text: 'I got a new phone from apple', query: 6,
    note: 'From the words-pulling-words article: here “phone” pulls “apple” towards tech.' },
  { label: 'orange + apple', text: 'I ate an orange and an apple', query: 3,
    note: 'From the words-pulling-words article: “apple” tells “orange” it is a fruit, not a colour.' },
  { label: 'once upon a', text: 'once upon a time', query: 2,
    note: 'From the words-pulling-words article: the context vector of “a” must predict “time”.' },
  { label: 'France / Spain', text: 'the capital of France is Paris and the capital of Spain is Madrid', query: 4,
    note: 'From the words-pulling-words article: plain averaging makes both sentences look alike; attention can weigh “France” and “Spain”.' },
  { label: 'bride + ring', text: 'the bride wore a ring', query: 4,
    note: 'From the words-pulling-words article: asymmetric pull. Try the asymmetric pair of weights.' },
  { label: 'fruit lookup', text: 'fruit apple banana chair', query: 0,
    note: 'From “An Intuition for Attention”: a soft key-value lookup, where “fruit” matches apple and banana, not chair.' },
];
