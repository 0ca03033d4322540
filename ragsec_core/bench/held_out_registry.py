"""Every held-out attack form's builder by name (`HELD_OUT`), one dispatch for `attack_forms.form_texts`: the
first rounds' forms (`held_out_forms.FIRST_FORMS`), then each later round's module's part, in the order the rounds
added them. A round's module registers its forms here and in `options.ATTACK_FORMS`, nowhere else.
"""

from __future__ import annotations

from ragsec_core.bench.held_out_authored import AUTHORED_FORMS
from ragsec_core.bench.held_out_bundle import BUNDLE_FORMS
from ragsec_core.bench.held_out_captures import CAPTURE_FORMS
from ragsec_core.bench.held_out_catalog import CATALOG_FORMS
from ragsec_core.bench.held_out_domain import DOMAIN_FORMS
from ragsec_core.bench.held_out_export import EXPORT_FORMS
from ragsec_core.bench.held_out_forms import FIRST_FORMS
from ragsec_core.bench.held_out_graph import GRAPH_FORMS
from ragsec_core.bench.held_out_machine import Builder
from ragsec_core.bench.held_out_notations import NOTATION_FORMS
from ragsec_core.bench.held_out_records import RECORD_FORMS
from ragsec_core.bench.held_out_render import RENDER_FORMS
from ragsec_core.bench.held_out_repo import REPO_FORMS
from ragsec_core.bench.held_out_scripts import SCRIPT_FORMS
from ragsec_core.bench.held_out_source import SOURCE_FORMS
from ragsec_core.bench.held_out_specs import SPEC_FORMS
from ragsec_core.bench.held_out_team import TEAM_FORMS

HELD_OUT: dict[str, Builder] = {
    **FIRST_FORMS, **SOURCE_FORMS, **AUTHORED_FORMS, **REPO_FORMS, **RENDER_FORMS, **EXPORT_FORMS, **TEAM_FORMS,
    **CATALOG_FORMS, **DOMAIN_FORMS, **GRAPH_FORMS, **BUNDLE_FORMS, **RECORD_FORMS, **SCRIPT_FORMS, **CAPTURE_FORMS,
    **SPEC_FORMS, **NOTATION_FORMS,
}
