# ruff: noqa: E501
"""The paper's prompts (GeAR, Appendix "Prompts"), verbatim, as Python format templates.

Verbatim means the paper's wording, typos included ("knowlege", "your should", "buy Jim Tully"): results are only
comparable with the paper if the model sees the same text. Only LaTeX was removed: `\\` line ends became newlines,
\\textbf/\\textcolor markup was dropped, and `{{ }}` stay doubled exactly as in the paper's Python-format source (they
render as single braces). Where the layout of the paper forced a choice, a comment says which was made.
Placeholders: {wiki_title} {passage} {docs} {query} {triples} {reason} {passages} {question}.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

# Source: box "Triple Extraction" (App. "Offline Prompts"), with its two demonstrations. The paper wraps the first
# demonstration's named-entity list onto a second line for page width; it is kept on one line here. The paper leaves
# the final ``` fence unclosed; so does this template.
TRIPLE_EXTRACTION = """\
# Instruction

Your task is to construct an RDF (Resource Description Framework) graph from the given passages and named entity lists.
Respond with a JSON list of triples, with each triple representing a relationship in the RDF graph.
Pay attention to the following requirements:
- Each triple should contain at least one, but preferably two, of the named entities in the list for each passage.
- Clearly resolve pronouns to their specific names to maintain clarity.

Convert the paragraph into a JSON dict containing a named entity list and a triple list.

# Demonstration #1

Paragraph:
```
Magic Johnson

After winning a national championship with Michigan State in 1979, Johnson was selected first overall in the 1979 NBA draft by the Lakers, leading the team to five NBA championships during their "Showtime" era.
```
{{"named_entities": ["Michigan State", "national championship", "1979", "Magic Johnson", "National Basketball Association", "Los Angeles Lakers", "NBA Championship"]}}
{{
    "triples": [
        ("Magic Johnson", "member of sports team", "Michigan State"),
        ("Michigan State", "award", "national championship"),
        ("Michigan State", "award date", "1979"),
        ("Magic Johnson", "draft pick number", "1"),
        ("Magic Johnson", "drafted in", "1979"),
        ("Magic Johnson", "drafted by", "Los Angeles Lakers"),
        ("Magic Johnson", "member of sports team", "Los Angeles Lakers"),
        ("Magic Johnson", "league", "National Basketball Association"),
        ("Los Angeles Lakers", "league", "National Basketball Association"),
        ("Los Angeles Lakers", "award received", "NBA Championship"),
    ]
}}
```

# Demonstration #2

Paragraph:
```
Elden Ring

Elden Ring is a 2022 action role-playing game developed by FromSoftware. It was directed by Hidetaka Miyazaki with worldbuilding provided by American fantasy writer George R. R. Martin.
```
{{"named_entities": ["Elden Ring", "2022", "Role-playing video game", "FromSoftware", "Hidetaka Miyazaki", "United States of America", "fantasy", "George R. R. Martin"]}}
{{
    "triples": [
        ("Elden Ring", "publication", "2022"),
        ("Elden Ring", "genre", "action role-playing game"),
        ("Elden Ring", "publisher", "FromSoftware"),
        ("Elden Ring", "director", "Hidetaka Miyazaki"),
        ("Elden Ring", "screenwriter", "George R. R. Martin"),
        ("George R. R. Martin", "country of citizenship", "United States of America"),
        ("George R. R. Martin", "genre", "fantasy"),
    ]
}}


# Input

Convert the paragraph into a JSON dict, it has a named entity list and a triple list.

Paragraph:
```
{wiki_title}

{passage}"""

# Source: box "Reader with and without Gist Memory". {memory_clause} is the blue text, present only when the gist
# memory is active (READER_MEMORY_CLAUSE), and {triples} is then the memory; both are empty otherwise.
READER = """\
Your task is to find facts that help answer an input question.

You should present these facts as knowlege triples, which are structured as ("subject", "predicate", "object").
Example:
Question: When was Neville A. Stanton's employer founded?
Facts: ("Neville A. Stanton", "employer", "University of Southampton"), ("University of Southampton", "founded in", "1862")


Now you are given some documents:
{docs}


Based on these documents{memory_clause},
find additional supporting fact(s) that may help answer the following question.

Note: if the information you are given is insufficient, output only the relevant facts you can find.

Question: {query}
Facts: {triples}"""

READER_MEMORY_CLAUSE = " and some preliminary facts provided below"

# Source: box "Reasoning for Termination".
REASONING_FOR_TERMINATION = """\
# Task Description:
You are given an input question and a set of known facts:
Question: {query}
Facts: {triples}

Your reply must follow the required format:
1. If the provided facts contain the answer to the question, your should reply as follows:
Answerable: Yes
Answer: ...

2. If not, you should explain why and reply as follows:
Answerable: No
Why: ...

# Your reply:"""

# Source: box "Query Re-writing". The paper's source breaks "facts and / determine" across lines without `\\`,
# which LaTeX renders as one space: it is one line here.
QUERY_REWRITING = """\
# Task Description:
You will be presented with an input question and a set of known facts.
These facts might be insufficient for answering the question for some reason.
Your task is to analyze the question given the provided facts and determine what else information is needed for the next step.

# Example:
Question: What region of the state where Guy Shepherdson was born, contains SMA Negeri 68?
Facts: ("Guy Shepherdson", "born in", "Jakarta")
Reason: The provided facts only indicate that Guy Shepherdson was born in Jakarta, but they do not provide any information about the region of the state that contains SMA Negeri 68.
Next Question: What region of Jakarta contains SMA Negeri 68?

# Your Task:
Question: {query}
Facts: {triples}
Reason: {reason}

Next Question:"""

# Source: box "Retrieved Passages with In-context Example" (Table "EM and F1"). The paper writes the retrieved
# passages as "Wikipedia Title : {title} {text} for each retrieved passage ..."; {passages} takes them formatted as
# HippoRAG does (see format_docs), each ending in a blank line, so "Question:" follows the last passage.
QA_WITH_PASSAGES = """\
As an advanced reading comprehension assistant, your task is to analyze text passages and corresponding questions meticulously, with the aim of providing the correct answer.
==================
For example:
==================
Wikipedia Title: Edward L. Cahn
Edward L. Cahn (February 12, 1899 – August 25, 1963) was an American film director.

Wikipedia Title: Laughter in Hell
Laughter in Hell is a 1933 American Pre-Code drama film directed by Edward L. Cahn and starring Pat O'Brien. The film's title was typical of the sensationalistic titles of many Pre-Code films. Adapted from the 1932 novel of the same name buy Jim Tully, the film was inspired in part by "I Am a Fugitive from a Chain Gang" and was part of a series of films depicting men in chain gangs following the success of that film. O'Brien plays a railroad engineer who kills his wife and her lover in a jealous rage and is sent to prison. The movie received a mixed review in "The New York Times" upon its release. Although long considered lost, the film was recently preserved and was screened at the American Cinematheque in Hollywood, CA in October 2012. The dead man's brother ends up being the warden of the prison and subjects O'Brien's character to significant abuse. O'Brien and several other characters revolt, killing the warden and escaping from the prison. The film drew controversy for its lynching scene where several black men were hanged. Contrary to reports, only blacks were hung in this scene, though the actual executions occurred off-camera (we see instead reaction shots of the guards and other prisoners). The "New Age" (an African American weekly newspaper) film critic praised the scene for being courageous enough to depict the atrocities that were occurring in some southern states.

Wikipedia Title: Theodred II (Bishop of Elmham)
Theodred II was a medieval Bishop of Elmham. The date of Theodred's consecration unknown, but the date of his death was sometime between 995 and 997.

Wikipedia Title: Etan Boritzer
Etan Boritzer( born 1950) is an American writer of children 's literature who is best known for his book" What is God?" first published in 1989. His best selling" What is?" illustrated children's book series on character education and difficult subjects for children is a popular teaching guide for parents, teachers and child- life professionals. Boritzer gained national critical acclaim after" What is God?" was published in 1989 although the book has caused controversy from religious fundamentalists for its universalist views. The other current books in the" What is?" series include What is Love?, What is Death?, What is Beautiful?, What is Funny?, What is Right?, What is Peace?, What is Money?, What is Dreaming?, What is a Friend?, What is True?, What is a Family?, What is a Feeling?" The series is now also translated into 15 languages. Boritzer was first published in 1963 at the age of 13 when he wrote an essay in his English class at Wade Junior High School in the Bronx, New York on the assassination of John F. Kennedy. His essay was included in a special anthology by New York City public school children compiled and published by the New York City Department of Education.

Wikipedia Title: Peter Levin
Peter Levin is an American director of film, television and theatre.

Question: When did the director of film Laughter In Hell die?
Answer: August 25, 1963.
==================
Given the following text passages and questions, please present a concise, definitive answer, devoid of additional elaborations, and of maximum length of 6 words.
==================

{passages}Question: {question}

Answer:"""

# Source: box "No Retrieved Passages" (the purple instruction only).
QA_NO_PASSAGES = """\
Given the following question, please present a concise, definitive answer, devoid of additional elaborations, and of maximum length of 6 words.

Question: {question}

Answer:"""



def format_triples(triples: Iterable[Sequence[str]]) -> str:
    """Triples as the paper writes facts: ("s", "p", "o"), ("s", "p", "o")."""
    return ", ".join("(" + ", ".join(f'"{part}"' for part in triple) + ")" for triple in triples)


def format_docs(passages: Iterable[tuple[str, str]]) -> str:
    """(title, text) passages as 'Wikipedia Title: {title}\\n{text}\\n\\n' each (HippoRAG's and the QA prompt's layout)."""
    return "".join(f"Wikipedia Title: {title}\n{text}\n\n" for title, text in passages)


def extraction_prompt(title: str, passage: str) -> str:
    """The triple-extraction prompt for one passage."""
    return TRIPLE_EXTRACTION.format(wiki_title=title, passage=passage)


def reader_prompt(docs: str, query: str, memory: Sequence[Sequence[str]] | None = None) -> str:
    """The reader prompt; with `memory` (the gist memory, possibly empty) the blue text and its triples are added."""
    docs = docs.rstrip("\n")  # format_docs ends every passage in a blank line; the template supplies its own
    if memory is None:
        return READER.format(docs=docs, query=query, memory_clause="", triples="")
    return READER.format(docs=docs, query=query, memory_clause=READER_MEMORY_CLAUSE, triples=format_triples(memory))


def reasoning_prompt(query: str, triples: Sequence[Sequence[str]]) -> str:
    """The termination-reasoning prompt over the gist memory."""
    return REASONING_FOR_TERMINATION.format(query=query, triples=format_triples(triples))


def rewriting_prompt(query: str, triples: Sequence[Sequence[str]], reason: str) -> str:
    """The query re-writing prompt given the memory and the reasoner's explanation."""
    return QUERY_REWRITING.format(query=query, triples=format_triples(triples), reason=reason)


def qa_prompt(passages: Iterable[tuple[str, str]] | None, question: str) -> str:
    """The QA prompt: with (title, text) passages the in-context version, without (None or empty) the bare one."""
    formatted = format_docs(passages or [])
    if not formatted:
        return QA_NO_PASSAGES.format(question=question)
    return QA_WITH_PASSAGES.format(passages=formatted, question=question)
