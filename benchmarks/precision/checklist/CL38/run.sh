#!/bin/sh
# Upscales a video inside the published container image.
TAG=${TAG:-latest}
docker run --gpus all -it --rm -v "$PWD/data:/host" "ghcr.io/example/video-upscale:$TAG" \
    -i input.mp4 -o output.mp4 -p realesrgan -s 4
