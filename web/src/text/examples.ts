// Example sentences from the seed articles, offered as presets in the attention lab.

export interface Example {
  label: string;
  text: string;
  /** Index of the token to focus the one-query walk-through on. */
  query: number;
  note: string;
}

export const EXAMPLES: Example[] = [
  { label: 'Houston', text: 'Houston we have a problem', query: 2,
    note: 'Seed 000: “have” means something else after “Houston, we” than in “we’ll always have”.' },
  { label: 'banana + apple', text: 'I ate a banana and an apple', query: 6,
    note: 'Seed 003: “banana” pulls “apple” towards the fruits.' },
  { label: 'phone + apple', text: 'I got a new phone from apple', query: 6,
    note: 'Seed 003: here “phone” pulls “apple” towards tech.' },
  { label: 'orange + apple', text: 'I ate an orange and an apple', query: 3,
    note: 'Seed 003: “apple” tells “orange” it is a fruit, not a colour.' },
  { label: 'once upon a', text: 'once upon a time', query: 2,
    note: 'Seed 003: the context vector of “a” must predict “time”.' },
  { label: 'France / Spain', text: 'the capital of France is Paris and the capital of Spain is Madrid', query: 4,
    note: 'Seed 003: plain averaging makes both sentences look alike; attention can weigh “France” and “Spain”.' },
  { label: 'bride + ring', text: 'the bride wore a ring', query: 4,
    note: 'Seed 003: asymmetric pull. Try the asymmetric W_Q / W_K preset.' },
  { label: 'fruit lookup', text: 'fruit apple banana chair', query: 0,
    note: 'Seed 004: a soft key-value lookup: “fruit” matches apple and banana, not chair.' },
];
