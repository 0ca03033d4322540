"""ragsec Streamlit app: entry point. Pages are thin views over ragsec_core (see pages/)."""

import os
from pathlib import Path

import streamlit as st

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from pages.backend import backend_sidebar
from pages.common import app_pages, routed  # after HF_HUB_OFFLINE: it imports the model stack

# A local favicon: Streamlit fetches :material: favicons from fonts.gstatic.com, and the app must make no
# external request (it runs on an analyst's machine, often offline).
ICON = Path(__file__).with_name("assets") / "icon.png"
st.set_page_config(page_title="ragsec", page_icon=str(ICON), layout="wide")

navigation = st.navigation(app_pages())
backend_sidebar()  # every page: the local model or an endpoint (per browser session)
with routed():  # each page checks it was reached through this navigation (pages.common.ensure_routed)
    navigation.run()
