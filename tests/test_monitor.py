"""Corpus monitor: every detector ranks a planted sleeper/trigger pair above the clean documents."""

import json

import numpy as np
import pytest

from ragsec_core._util.errors import RagsecError
from ragsec_core.chameleon.evaluate import SLEEPER_ID, TRIGGER_ID, inject
from ragsec_core.chameleon.scenarios import builtin_scenarios
from ragsec_core.monitor.detectors import (
    best_f1,
    coretrieval_clusters,
    default_query_sets,
    evaluate,
    keyword_anomaly,
    load_query_sets,
    operating_point,
    qpd,
    roc,
    run_monitor,
    semantic_drift,
)

SC = builtin_scenarios()[0]
POISON = {SLEEPER_ID, TRIGGER_ID}


def _planted_report(pipeline, corpus: str, qpd_threshold: float):
    p = pipeline(corpus)
    planted = inject(p.retriever, SC.sleeper_base, SC.trigger_text)
    sens, ben = default_query_sets([SC], p.corpus)
    return run_monitor(planted, sens, ben, k=5, alpha=0.5, qpd_threshold=qpd_threshold)


@pytest.fixture(scope="module")
def general_report(pipeline):
    """The security-flavoured pair planted in the general (encyclopedic) corpus, like the paper's FEVER."""
    return _planted_report(pipeline, "general", 0.15)


@pytest.fixture(scope="module")
def secops_report(pipeline):
    return _planted_report(pipeline, "secops", 0.20)


@pytest.mark.parametrize("detector", ["keyword_anomaly", "semantic_drift", "qpd", "qpd_differential", "clustering"])
def test_each_detector_ranks_the_planted_poison_above_clean_documents(general_report, detector):
    s = general_report.scores(detector)
    labels = np.array([d.doc_id in POISON for d in general_report.docs])
    best_poison, clean = s[labels].max(), s[~labels]
    assert best_poison > np.quantile(clean, 0.95), (detector, best_poison, np.quantile(clean, 0.95))
    assert roc(s, labels)["auc"] > 0.9


def test_qpd_flags_the_planted_pair_above_clean_documents_on_the_security_corpus(secops_report):
    flagged = {d.doc_id for d in secops_report.docs if "qpd" in d.flags}
    assert flagged >= POISON
    # the technical corpus has real VPN/MFA runbooks the sensitive family also retrieves: a few false
    # positives (measured: 4 of 205 at alpha 0.5, k 5), but the planted pair ranks first
    assert len(flagged - POISON) <= 0.05 * len(secops_report.docs), flagged
    top2 = sorted(secops_report.docs, key=lambda d: -d.qpd_differential)[:2]
    assert {d.doc_id for d in top2} == POISON


def test_keyword_camouflage_security_corpus_hides_what_the_general_corpus_exposes(general_report, secops_report):
    """The paper's corpus effect: the same trigger's mean-idf rank is far worse in the technical corpus."""
    def pct(rep):
        s = rep.scores("keyword_anomaly")
        j = next(i for i, d in enumerate(rep.docs) if d.doc_id == TRIGGER_ID)
        return (s < s[j]).mean()

    assert pct(general_report) > pct(secops_report)


def test_detector_primitives_hand_cases():
    e = np.array([[1.0, 0.0], [1.0, 0.0], [0.0, 1.0]])
    d = semantic_drift(e)
    assert d[2] > d[0] == d[1]
    kw = keyword_anomaly(["port port firewall", "port firewall", "zebra quagga"])
    assert kw[2] > kw[0]
    sens = np.array([[1, 0, 1], [1, 0, 0]], dtype=bool)
    ben = np.array([[0, 1, 1], [0, 1, 0], [0, 0, 0], [0, 0, 0]], dtype=bool)
    ratio, diff, rs, rb = qpd(sens, ben)
    np.testing.assert_allclose(rs, [1.0, 0.0, 0.5])
    np.testing.assert_allclose(rb, [0.0, 0.5, 0.25])
    np.testing.assert_allclose(ratio, [1.0, 0.0, 0.5 / 0.75])
    np.testing.assert_allclose(diff, [1.0, 0.0, 0.25])
    m = np.array([[1, 1, 0, 0], [1, 1, 0, 1], [1, 1, 1, 0], [0, 0, 1, 1]], dtype=bool)
    score, cid = coretrieval_clusters(m)
    assert score[0] == score[1] == pytest.approx(0.75)  # Jaccard 1, support 3 -> 3/4
    assert cid[0] == cid[1] >= 0 and cid[2] == cid[3] == -1


def test_evaluation_metrics_hand_cases():
    s = np.array([0.9, 0.8, 0.3, 0.2, 0.1])
    y = np.array([True, False, True, False, False])
    assert roc(s, y)["auc"] == pytest.approx(5 / 6)
    f = best_f1(s, y)
    assert f["f1"] == pytest.approx(0.8) and f["threshold"] == 0.3  # tp 2, fp 1
    op = operating_point(s, y, target_fpr=0.0, queries_per_day=1000, k=5)
    assert op["threshold"] == 0.9 and op["recall"] == 0.5 and op["alerts_per_day"] == 0.0
    op = operating_point(s, y, target_fpr=0.34, queries_per_day=1000, k=5)
    assert op["fpr"] == pytest.approx(1 / 3) and op["alerts_per_day"] == pytest.approx(5000 / 3)


def test_evaluate_and_query_files(general_report, tmp_path):
    ev = evaluate(general_report, POISON)
    assert ev["n_poisoned"] == 2 and set(ev) >= {"qpd", "keyword_anomaly", "semantic_drift", "clustering"}
    assert ev["qpd_differential"]["best_f1"]["f1"] > 0.5  # eq. 3 alone ties every sensitive-only chunk at 1.0
    f = tmp_path / "q.json"
    f.write_text(json.dumps({"sensitive": ["a"], "benign": ["b", "c"]}))
    assert load_query_sets(f) == (["a"], ["b", "c"])
    f.write_text(json.dumps({"sensitive": [], "benign": ["b"]}))
    with pytest.raises(RagsecError):
        load_query_sets(f)
    with pytest.raises(RagsecError):
        evaluate(general_report, set())
