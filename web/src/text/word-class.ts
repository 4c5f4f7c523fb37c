// Function words and content words, for the captions that say what a head follows by content. A closed list:
// articles, pronouns, prepositions, conjunctions and the forms of "be" (every function word of the words corpus,
// web/src/text/corpus.ts, and the common ones a learner may type). Every other word is a content word (nouns,
// verbs, adjectives: "ate", "banana", "new", "madrid"); the sentence end "." and the unknown-word token are neither.
import { END, UNKNOWN } from './corpus';

export const FUNCTION_WORDS: ReadonlySet<string> = new Set([
  'a', 'an', 'the',
  'i', 'me', 'my', 'you', 'your', 'he', 'him', 'his', 'she', 'her', 'it', 'its', 'we', 'us', 'our', 'they', 'them', 'their',
  'of', 'from', 'upon', 'in', 'on', 'at', 'to', 'with', 'for', 'by', 'into', 'about', 'as',
  'and', 'or', 'but', 'if', 'than', 'that',
  'is', 'are', 'was', 'were', 'be', 'been', 'am',
]);

/** A word that carries meaning of its own: not a function word, not "." and not the unknown-word token. */
export function isContentWord(word: string): boolean {
  return !FUNCTION_WORDS.has(word) && word !== END && word !== UNKNOWN;
}
