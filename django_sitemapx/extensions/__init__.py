"""Image, video and news: "extension" means these three, and nothing else.

``values`` turns what a source gives into protocol text; ``declarations``
validates a source's declarations and sizes its pages for them.
"""

from .declarations import Related, RelatedImages, RelatedVideos
from .values import News, Publication, Video

__all__ = ["News", "Publication", "Related", "RelatedImages", "RelatedVideos", "Video"]
