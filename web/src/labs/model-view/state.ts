// The model view's URL state (web/URL_STATE.md): the text the real model reads (mx). Its line breaks are kept: a
// model's tokenizer cuts them into tokens of their own.
import { fieldsOf, type Slice } from '../../state/params';

export const MODEL_VIEW_LIMITS = { textChars: 2000 } as const;

/** The first example: the articles' sentence. */
export const MODEL_VIEW_TEXT = 'Houston we have a problem';

export interface ModelViewState {
  modelText: string;
}

/** Up to 2000 characters; line breaks and tabs allowed, no other control characters. */
const modelText = (s: string) => (s.length <= MODEL_VIEW_LIMITS.textChars && !/[^\P{Cc}\n\t]/u.test(s) ? s : undefined);

const modelViewField = fieldsOf<ModelViewState>();
export const modelViewSlice: Slice<ModelViewState> = {
  defaults: () => ({ modelText: MODEL_VIEW_TEXT }),
  fields: [modelViewField('mx', 'modelText', modelText, (v) => v)],
};
