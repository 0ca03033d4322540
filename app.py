"""ragsec Streamlit app: entry point. Pages are thin views over ragsec_core (see pages/)."""

import os
from pathlib import Path

import streamlit as st

os.environ.setdefault("HF_HUB_OFFLINE", "1")

# A local favicon: Streamlit fetches :material: favicons from fonts.gstatic.com, and the app must make no
# external request (it runs on an analyst's machine, often offline).
ICON = Path(__file__).with_name("assets") / "icon.png"
st.set_page_config(page_title="ragsec", page_icon=str(ICON), layout="wide")

navigation = st.navigation(
    [
        st.Page("pages/investigate.py", title="Investigate", icon=":material/search:", default=True),
        st.Page("pages/traceback.py", title="Traceback", icon=":material/troubleshoot:"),
        st.Page("pages/retrieval_lab.py", title="Retrieval lab", icon=":material/tune:"),
        st.Page("pages/monitor.py", title="Corpus monitor", icon=":material/monitoring:"),
        st.Page("pages/benchmarks.py", title="Benchmarks", icon=":material/bar_chart:"),
        st.Page("pages/demo.py", title="Guided demo", icon=":material/school:"),
    ]
)
navigation.run()
