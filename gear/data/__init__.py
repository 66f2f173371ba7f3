"""Reading what people bring: corpora (HippoRAG, HotpotQA, raw text), QA sets with their gold passages, OpenIE
triples aligned to passages, and the chunking of raw text into passages. Every bad record gets a one-line
InputError naming the file, the record and the field."""
