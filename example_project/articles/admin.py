from django.contrib import admin

from example_project.articles.models import Article, Category


@admin.register(Category)
class CategoryAdmin(admin.ModelAdmin):
    list_display = ["name", "slug"]
    prepopulated_fields = {"slug": ["name"]}


@admin.register(Article)
class ArticleAdmin(admin.ModelAdmin):
    list_display = ["title", "category", "is_published", "updated_at"]
    list_filter = ["is_published", "category"]
    search_fields = ["title", "slug"]
