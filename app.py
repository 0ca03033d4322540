"""ragsec Streamlit app: entry point. Pages are thin views over ragsec_core (see pages/)."""

import os

import streamlit as st

os.environ.setdefault("HF_HUB_OFFLINE", "1")

st.set_page_config(page_title="ragsec", page_icon=":material/policy:", layout="wide")

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
