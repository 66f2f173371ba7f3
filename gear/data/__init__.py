"""Reading what people bring: corpora (HippoRAG, HotpotQA, raw text), QA sets with their gold passages, OpenIE
triples aligned to passages, and the chunking of raw text into passages. Every bad record gets a one-line
InputError naming the file, the record and the field.

Its modules: reading (a file read with a reason a person can act on), corpus (JSON corpora, and the records every
loader shares), questions (QA sets and their gold passages), openie (triples, aligned to the passages), text_files
(.txt/.md files and folders as passages), chunking (raw text into passages) and qa_set (an index's own QA set, kept
beside it)."""
