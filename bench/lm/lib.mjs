// Small helpers shared by the LM bench's adapters and orchestrator.

/** Index of the largest value (the first of equal ones). */
export function argmax(row) {
  let best = 0;
  for (let i = 1; i < row.length; ++i) if (row[i] > row[best]) best = i;
  return best;
}

/** A JSON file's bytes, parsed. */
export const readJson = (bytes) => JSON.parse(new TextDecoder().decode(bytes));
