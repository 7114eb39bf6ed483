"""How well a model's explanation matches an item's analysis: BLEU and ROUGE as CFLUE reports them.

CFLUE's published evaluation scores the explanation a model writes on its second
line against the item's analysis, on items that have one:

- **the explanation**: when the stripped output has exactly two lines, the second
  without its ``解析：`` label; otherwise the whole output;
- **tokens**: both texts are segmented with jieba and joined with spaces;
- **BLEU-1 and BLEU-4**: sacrebleu's corpus BLEU with its defaults (13a
  tokenization, exponential smoothing) over all scored pairs; BLEU-1 is its unigram
  precision, BLEU-4 its score;
- **ROUGE-1, -2 and -L**: the F-scores of the ``rouge`` package (``Rouge()``), the
  mean over pairs; F is taken from its precision and recall without the 1e-8 it adds to
  the denominator (its perfect match is 0.999999995: here 1, any other within 1e-8).

The same packages are called here, so the figures are theirs.  Corpus BLEU is not a
mean of sentence scores, so each prediction stores its n-gram statistics
(:class:`BleuStatistics`) and a set of predictions adds them up: the result equals
``corpus_score`` over the same texts.  Two cases differ: where the published code
would stop with an error (an explanation that is empty once segmented), the pair
scores 0 here; and an explanation of the same single word as the analysis (ten CFLUE
analyses read just "略", omitted) scores ROUGE-2 1 here, where the package, finding no
bigram, gives a perfect answer 0.  Figures are fractions (0.4578), as every rate vetbench reports; the
paper prints them as percentages (45.78).
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

__all__ = [
    "EXPLANATION_LABEL",
    "BleuStatistics",
    "ExplanationScore",
    "ExplanationSummary",
    "explanation_text",
    "score_explanation",
    "segment",
    "summarize_explanations",
]

EXPLANATION_LABEL = "解析："
MAX_NGRAM = 4
_RECURSION_MARGIN = 1000  # the rouge package reconstructs each LCS recursively


@dataclass(frozen=True)
class BleuStatistics:
    """One pair's BLEU sufficient statistics: matching and total n-grams (1 to 4), lengths."""

    matches: tuple[int, ...]
    totals: tuple[int, ...]
    hypothesis_length: int
    reference_length: int


@dataclass(frozen=True)
class ExplanationScore:
    """One explanation against its reference analysis."""

    bleu: BleuStatistics
    rouge_1: float
    rouge_2: float
    rouge_l: float


@dataclass(frozen=True)
class ExplanationSummary:
    """The figures of a set of explanations (fractions)."""

    count: int
    bleu_1: float
    bleu_4: float
    rouge_1: float
    rouge_2: float
    rouge_l: float


def explanation_text(output: str) -> str:
    """The explanation in a model's output, as CFLUE's code takes it."""
    lines = output.strip().split("\n")
    if len(lines) == 2:
        return lines[1].replace(EXPLANATION_LABEL, "")
    return output


@lru_cache(maxsize=1)
def _jieba() -> Any:
    import jieba

    jieba.setLogLevel(logging.WARNING)  # it announces loading its dictionary otherwise
    return jieba


def segment(text: str) -> str:
    """``text`` segmented by jieba, the words joined with single spaces."""
    return " ".join(_jieba().lcut(text))


@lru_cache(maxsize=1)
def _bleu() -> Any:
    from sacrebleu.metrics import BLEU

    # Sentence statistics are the same with or without effective order; asking for it
    # only keeps sacrebleu from warning about sentence-level scores.
    return BLEU(effective_order=True)


def _bleu_statistics(hypothesis: str, reference: str) -> BleuStatistics:
    score = _bleu().sentence_score(hypothesis, [reference])
    return BleuStatistics(
        matches=tuple(int(count) for count in score.counts),
        totals=tuple(int(total) for total in score.totals),
        hypothesis_length=int(score.sys_len),
        reference_length=int(score.ref_len),
    )


def _rouge_f_scores(hypothesis: str, reference: str) -> tuple[float, float, float]:
    from rouge import Rouge

    if hypothesis.split() == reference.split() and reference.split():
        # The same words are a perfect match, whatever the package can count: of a single
        # word (CFLUE's analyses that read "略", omitted) it finds no bigram, ROUGE-2 0.
        return (1.0, 1.0, 1.0)
    words = len(hypothesis.split()) + len(reference.split())
    if sys.getrecursionlimit() < words + _RECURSION_MARGIN:
        sys.setrecursionlimit(words + _RECURSION_MARGIN)  # never lowered: threads share it
    try:
        (scores,) = Rouge().get_scores(hypothesis, reference)
    except ValueError:  # an empty hypothesis or reference (nothing but "." either)
        return (0.0, 0.0, 0.0)
    rouge_1, rouge_2, rouge_l = (_f_score(scores[n]) for n in ("rouge-1", "rouge-2", "rouge-l"))
    return (rouge_1, rouge_2, rouge_l)


def _f_score(score: dict[str, float]) -> float:
    """The F-score of the package's precision and recall, without the 1e-8 it adds to the
    denominator: a perfect match is 1, not 0.999999995 (any other differs by under 1e-8)."""
    precision, recall = float(score["p"]), float(score["r"])
    return 0.0 if precision + recall == 0 else 2 * precision * recall / (precision + recall)


def score_explanation(output: str, reference: str) -> ExplanationScore:
    """The explanation in ``output`` against the ``reference`` analysis (both raw text)."""
    hypothesis = segment(explanation_text(output))
    reference_words = segment(reference)
    rouge_1, rouge_2, rouge_l = _rouge_f_scores(hypothesis, reference_words)
    return ExplanationScore(
        bleu=_bleu_statistics(hypothesis, reference_words),
        rouge_1=rouge_1,
        rouge_2=rouge_2,
        rouge_l=rouge_l,
    )


def summarize_explanations(scores: Sequence[ExplanationScore]) -> ExplanationSummary | None:
    """Corpus BLEU-1/BLEU-4 and mean ROUGE F-scores of ``scores``; None when there are none."""
    if not scores:
        return None
    from sacrebleu.metrics import BLEU

    template = BLEU()  # the corpus settings: smoothing and n-gram order as corpus_score uses
    corpus = BLEU.compute_bleu(
        [sum(score.bleu.matches[n] for score in scores) for n in range(MAX_NGRAM)],
        [sum(score.bleu.totals[n] for score in scores) for n in range(MAX_NGRAM)],
        sum(score.bleu.hypothesis_length for score in scores),
        sum(score.bleu.reference_length for score in scores),
        smooth_method=template.smooth_method,
        smooth_value=template.smooth_value,
        effective_order=False,
        max_ngram_order=template.max_ngram_order,
    )
    count = len(scores)
    return ExplanationSummary(
        count=count,
        bleu_1=_fraction(float(corpus.precisions[0]) / 100),
        bleu_4=_fraction(float(corpus.score) / 100),
        rouge_1=_fraction(sum(score.rouge_1 for score in scores) / count),
        rouge_2=_fraction(sum(score.rouge_2 for score in scores) / count),
        rouge_l=_fraction(sum(score.rouge_l for score in scores) / count),
    )


def _fraction(value: float) -> float:
    """``value`` kept within [0, 1]: a perfect corpus BLEU is ``exp(mean(log 100))``,
    100.00000000000004, and a percentage over 100 would be a fraction over 1 (ROUGE means
    cannot leave it, yet pass through here so that no figure does)."""
    return min(max(value, 0.0), 1.0)
