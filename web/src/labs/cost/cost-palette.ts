// Colours and names shared by the cost lab's charts: the FLOPs chart reuses the two path colours.
import type { CurvePath } from '../../workers/curve-worker';

export const COLOURS: Record<CurvePath | 'theory', string> = { materialized: '#b35806', streaming: '#1f4e89', theory: '#6b7080' };
export const PATH_LABEL: Record<CurvePath, string> = { materialized: 'materialized (n×n kept)', streaming: 'streaming (online softmax)' };
