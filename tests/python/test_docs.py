"""Documentation reaches the warehouse: every mart and column is described, the descriptions are DuckDB comments
that BI tools show, and `dbt docs generate` works offline."""

from __future__ import annotations

import json
import re

import pytest
import yaml

from conftest import REPO_ROOT, Warehouse

from retrieval_metrics.warehouse import MARTS

@pytest.fixture(scope="module")
def documented_models() -> dict[str, dict]:
    models: dict[str, dict] = {}
    for path in (REPO_ROOT / "models").rglob("*.yml"):
        for model in yaml.safe_load(path.read_text()).get("models", []):
            models[model["name"]] = model
    return models


def test_every_model_and_column_is_described_in_yaml(documented_models: dict[str, dict]) -> None:
    sql_models = {p.stem for p in (REPO_ROOT / "models").rglob("*.sql")} | {
        p.stem for p in (REPO_ROOT / "models").rglob("*.py")
    }
    assert sql_models <= set(documented_models), sql_models - set(documented_models)
    for name, model in documented_models.items():
        assert model.get("description"), name
        assert all(column.get("description") for column in model["columns"]), name


USER_DOCS = ["lesson", "measures", "importing", "plugins", "comparing", "judging", "serving-and-bi"]


def test_user_docs_name_tables_as_query_finds_them() -> None:
    """A model outside the marts (schema main) is named in the user's docs with its schema, as `retrieval-metrics
    query` finds it: `intermediate.int_qrels_unioned`, not `int_qrels_unioned`; and the name is a model's."""
    models = {(p.parent.name, p.stem) for p in (REPO_ROOT / "models").rglob("*") if p.suffix in {".sql", ".py"}}
    for doc in USER_DOCS:
        text = (REPO_ROOT / "docs" / f"{doc}.md").read_text()
        assert not re.findall(r"`(?:int|stg)_\w+", text), doc
        for schema, name in re.findall(r"`(intermediate|staging)\.((?:int|stg)_\w+)`", text):
            assert (schema, name) in models, (doc, f"{schema}.{name}")


@pytest.mark.dbt
def test_marts_and_their_columns_are_duckdb_comments(every_retriever: Warehouse, documented_models, tmp_path) -> None:
    warehouse = every_retriever.copy(tmp_path / "docs")  # dbt docs generate writes beside it
    table_comments = dict(warehouse.rows(
        "select table_name, comment from duckdb_tables() where schema_name = 'main'"
    ))
    for mart in MARTS:
        assert table_comments.get(mart), mart
        columns = warehouse.rows(
            "select column_name, comment from duckdb_columns() where schema_name = 'main' and table_name = ?", [mart]
        )
        documented = {c["name"] for c in documented_models[mart]["columns"]}
        assert {name for name, _ in columns} == documented, mart
        assert all(comment for _, comment in columns), [name for name, comment in columns if not comment]
    # the formulas reach BI tools too, e.g. NDCG's
    ndcg = warehouse.rows(
        "select comment from duckdb_columns() where table_name = 'question_metrics' and column_name = 'ndcg'"
    )[0][0]
    assert "DCG@k / IDCG@k" in ndcg and "ndcg_cut_k" in ndcg

    result = warehouse.dbt("docs", "generate")
    assert result.success, result.exception
    catalog = json.loads((warehouse.target_dir / "default" / "catalog.json").read_text())
    nodes = {node["metadata"]["name"]: node for node in catalog["nodes"].values()}
    assert set(MARTS) <= set(nodes)
    assert nodes["run_metrics"]["columns"]["mrr"]["comment"]
