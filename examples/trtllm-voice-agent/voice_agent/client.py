"""Stream tokens from Triton's TensorRT-LLM backend to the speech synthesizer."""

import numpy as np
import tritonclient.grpc as grpcclient

TRITON_URL = "localhost:8001"


def stream(prompt: str, on_token) -> None:
    client = grpcclient.InferenceServerClient(TRITON_URL)
    text = grpcclient.InferInput("text_input", [1, 1], "BYTES")
    text.set_data_from_numpy(np.array([[prompt.encode()]], dtype=object))
    client.start_stream(callback=lambda result, error: on_token(result, error))
    client.async_stream_infer("tensorrt_llm_bls", [text])
    client.stop_stream()
