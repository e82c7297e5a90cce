"""The ``serving`` stage: measuring and comparing models served over OpenAI-compatible HTTP.

``client`` streams one request; ``prompts`` makes or reads the prompts; ``load`` drives
``bench serve``'s open-loop load and measures it; ``compare`` runs ``verify serve``'s two-server
comparison; ``results`` holds the result objects that ``gpuport.report`` renders.
"""
