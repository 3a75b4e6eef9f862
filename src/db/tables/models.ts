/** Tables of the Models API. */

/** A model service's answer for an address, reused until `expires_at`. */
export interface ModelScoresTable {
  model: string;
  /** Lower-case. */
  address: string;
  /** JSON object: `score` and the fields passed through from the model service. */
  answer: string;
  fetched_at: number;
  expires_at: number;
}

export interface ModelTables {
  model_scores: ModelScoresTable;
}
